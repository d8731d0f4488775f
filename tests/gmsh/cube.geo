// The unit cube with physical groups: "left" (1) at x = 0, "right" (2) at x = 1, "other" (3) on the
// other four faces, "cube" (4). Regenerate the meshes (tests/t21_gmsh.c, test gmsh_generated, does it):
//   gmsh -3 -format msh22 -o cube_msh22.msh cube.geo
//   gmsh -3 -format msh41 -o cube_msh41.msh cube.geo
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Mesh.CharacteristicLengthMax = 0.4;
// the OpenCASCADE box numbers its faces x = 0, x = 1, y = 0, y = 1, z = 0, z = 1
Physical Surface("left", 1) = {1};
Physical Surface("right", 2) = {2};
Physical Surface("other", 3) = {3, 4, 5, 6};
Physical Volume("cube", 4) = {1};
