// A ball of radius 1 with a spherical hole of radius 0.4 at its centre, tetrahedra (unstructured), physical
// groups "outer" (1) and "inner" (2) on the two spheres, "shell" (3) the volume. Regenerate the mesh:
//   gmsh -3 -format msh41 -o sphere_hole.msh sphere_hole.geo
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1.0};
Sphere(2) = {0, 0, 0, 0.4};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = 0.25;
Physical Surface("outer", 1) = {1};
Physical Surface("inner", 2) = {2};
Physical Volume("shell", 3) = {3};
