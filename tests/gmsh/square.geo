// The unit square with physical groups: "walls" (1) on three sides, "outlet" (2) at x = 1,
// "domain" (3). Regenerate the meshes (tests/t21_gmsh.c, test gmsh_generated, does it in the build dir):
//   gmsh -2 -format msh22 -o square_msh22.msh square.geo
//   gmsh -2 -format msh41 -o square_msh41.msh square.geo
h = 0.25;
Point(1) = {0, 0, 0, h};
Point(2) = {1, 0, 0, h};
Point(3) = {1, 1, 0, h};
Point(4) = {0, 1, 0, h};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Curve("walls", 1) = {1, 3, 4};
Physical Curve("outlet", 2) = {2};
Physical Surface("domain", 3) = {1};
