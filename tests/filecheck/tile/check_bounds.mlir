// tile.check_bounds round-trips; check-bounds (debug=True only, after lower-control) puts
// one in front of every access, with an extent parameter per pointer argument, and masks
// the access to the elements inside its array; strip-debug turns the checks into records.
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s --print-op-generic | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s --split-input-file -p lower-control,check-bounds | filecheck %s
// RUN: %opt %s --split-input-file -p 'lower-control,check-bounds,strip-debug{debug=true}' | filecheck %s --check-prefix=DEBUG

func.func @ops(%o: tensor<16xi32>, %n: i32, %m: tensor<16xi1>, %s: i32) {
  tile.check_bounds "load" "x" %o, %n mask %m : tensor<16xi1> : tensor<16xi32>
  tile.check_bounds "store" "out" %s, %n : i32
  func.return
}
// ROUND-LABEL: func.func @ops(
// ROUND-NEXT:    tile.check_bounds "load" "x" %o, %n mask %m : tensor<16xi1> : tensor<16xi32>
// ROUND-NEXT:    tile.check_bounds "store" "out" %s, %n : i32

// -----

func.func @copy(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32) {
  %r = tile.range 0, 16 : tensor<16xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %v = tile.load %xp : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  %ns = tile.splat %n : i32 -> tensor<16xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<16xi32> -> tensor<16xi1>
  %os = tile.splat %out : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %op = tile.addptr %os, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  tile.store %op, %v mask %m : tensor<16xi1> : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  %one = arith.constant 1.0 : f32
  %old = tile.atomic_rmw "add", %out, %one : !tile.ptr<f32>, f32
  func.return
}
// CHECK-LABEL: func.func @copy(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32, %x_extent: i32 {tile.extent_of = 0 : i32}, %out_extent: i32 {tile.extent_of = 1 : i32})
// CHECK:         tile.check_bounds "load" "x" %r, %x_extent : tensor<16xi32>
// CHECK-NEXT:    %[[XE:.*]] = tile.splat %x_extent : i32 -> tensor<16xi32>
// CHECK-NEXT:    %[[IN:.*]] = tile.cmpi "ult", %r, %[[XE]] : tensor<16xi32> -> tensor<16xi1>
// CHECK-NEXT:    %v = tile.load %xp mask %[[IN]] : tensor<16xi1> : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
// CHECK:         tile.check_bounds "store" "out" %r, %out_extent mask %m : tensor<16xi1> : tensor<16xi32>
// CHECK:         %[[OIN:.*]] = tile.cmpi "ult", %r, %{{.*}} : tensor<16xi32> -> tensor<16xi1>
// CHECK-NEXT:    %[[BOTH:.*]] = arith.andi %m, %[[OIN]] : tensor<16xi1>
// CHECK-NEXT:    tile.store %op, %v mask %[[BOTH]] : tensor<16xi1> : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
// A scalar pointer that is the argument itself is at offset 0.
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    tile.check_bounds "atomic" "out" %[[ZERO]], %out_extent : i32
// CHECK-NEXT:    %[[SIN:.*]] = tile.cmpi "ult", %[[ZERO]], %out_extent : i32 -> i1
// CHECK-NEXT:    %old = tile.atomic_rmw "add", %out, %one mask %[[SIN]] : i1 : !tile.ptr<f32>, f32
// DEBUG-LABEL: func.func @copy(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32, %x_extent: i32 {tile.extent_of = 0 : i32}, %out_extent: i32 {tile.extent_of = 1 : i32}, %tilec_debug: !tile.ptr<i32> {tile.divisibility = 16 : i32})
// DEBUG-NOT:     tile.check_bounds
// DEBUG:         %[[OUT:.*]] = tile.cmpi "uge", %r, %{{.*}} : tensor<16xi32> -> tensor<16xi1>
// DEBUG:         tile.atomic_rmw "add", %{{.*}}, %{{.*}} mask %[[OUT]] : tensor<16xi1> : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
// DEBUG-NOT:     tile.check_bounds
// DEBUG:         func.return

// -----

// A pointer carried by a loop: lower-control carries its offset, which the check reads.
func.func @carried(%x: !tile.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 16 : tensor<16xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %p0 = tile.addptr %xs, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %acc, %p = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero, %q = %p0) -> (tensor<16xf32>, tensor<16x!tile.ptr<f32>>) : i32 {
    %v = tile.load %q : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
    %s = arith.addf %a, %v : tensor<16xf32>
    %ns = tile.splat %n : i32 -> tensor<16xi32>
    %q2 = tile.addptr %q, %ns : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    scf.yield %s, %q2 : tensor<16xf32>, tensor<16x!tile.ptr<f32>>
  }
  func.return
}
// CHECK-LABEL: func.func @carried(%x: !tile.ptr<f32>, %n: i32, %x_extent: i32 {tile.extent_of = 0 : i32})
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[OFF:.*]] = %r)
// CHECK:           tile.check_bounds "load" "x" %[[OFF]], %x_extent : tensor<16xi32>
