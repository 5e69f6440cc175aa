// tile.print and tile.assert round-trip; strip-debug drops them (debug=False) or refuses
// them (debug=True); lower-control makes scf ops carry offsets instead of pointers.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s -p strip-debug | filecheck %s --check-prefix=STRIP
// RUN: %opt %s -p lower-control | filecheck %s --check-prefix=LOWER
// RUN: %opt %s -p strip-debug,lower-control,canonicalize,assign-layouts,tile-to-simt | filecheck %s --check-prefix=SIMT
// RUN: %opt %s -p 'strip-debug{debug=true}' | filecheck %s --check-prefix=DEBUG

func.func @debug(%n: i32) {
  %r = tile.range 0, 16 : tensor<16xi32>
  %ns = tile.splat %n : i32 -> tensor<16xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<16xi32> -> tensor<16xi1>
  tile.print "r:" %r, %n : tensor<16xi32>, i32
  tile.print "here"
  tile.assert %m, "r < n" : tensor<16xi1>
  %c = tile.cmpi "sgt", %n, %n : i32 -> i1
  tile.assert %c, "" : i1
  func.return
}
// CHECK-LABEL: func.func @debug(
// CHECK:         tile.print "r:" %r, %n : tensor<16xi32>, i32
// CHECK-NEXT:    tile.print "here"
// CHECK-NEXT:    tile.assert %m, "r < n" : tensor<16xi1>
// CHECK:         tile.assert %c, "" : i1
// STRIP-LABEL: func.func @debug(
// STRIP-NOT:     tile.print
// STRIP-NOT:     tile.assert
// STRIP:         func.return
// debug=True: each print/assert appends records to a hidden buffer (the last parameter):
// an atomic_add on word 0 reserves them, stores fill them in.
// DEBUG:       func.func @debug(%n: i32, %tilec_debug: !tile.ptr<i32> {tile.divisibility = 16 : i32})
// DEBUG-NOT:   tile.print
// DEBUG:       tile.atomic_rmw "add", %{{.*}}, %{{.*}} : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
// DEBUG:       tile.store %{{.*}}, %{{.*}} mask %{{.*}} : tensor<16xi1> : tensor<16x!tile.ptr<i32>>, tensor<16xi32>
// DEBUG:       tile.atomic_rmw "add", %tilec_debug, %{{.*}} : !tile.ptr<i32>, i32
// DEBUG-NOT:   tile.print
// DEBUG-NOT:   tile.assert

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
  tile.store %p, %acc : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  %pos = tile.cmpi "sgt", %n, %c0 : i32 -> i1
  %t = scf.if %pos -> (!tile.ptr<f32>) {
    %n1 = tile.addptr %x, %n : !tile.ptr<f32>, i32
    scf.yield %n1 : !tile.ptr<f32>
  } else {
    scf.yield %x : !tile.ptr<f32>
  }
  %w = scf.while (%y = %t) : (!tile.ptr<f32>) -> !tile.ptr<f32> {
    %f = tile.load %y : !tile.ptr<f32> -> f32
    %zf = arith.constant 0.0 : f32
    %more = tile.cmpf "ogt", %f, %zf : f32 -> i1
    scf.condition(%more) %y : !tile.ptr<f32>
  } do {
  ^bb0(%y2: !tile.ptr<f32>):
    %y3 = tile.addptr %y2, %c1 : !tile.ptr<f32>, i32
    scf.yield %y3 : !tile.ptr<f32>
  }
  %v = tile.load %w : !tile.ptr<f32> -> f32
  tile.store %x, %v : !tile.ptr<f32>, f32
  func.return
}
// LOWER-LABEL: func.func @carried(
// LOWER:         %acc, %p_offset = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero, %q_offset = %r) -> (tensor<16xf32>, tensor<16xi32>) : i32 {
// LOWER-NEXT:      %[[XS:.*]] = tile.splat %x : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
// LOWER-NEXT:      %q = tile.addptr %[[XS]], %q_offset : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
// LOWER-NEXT:      %v = tile.load %q
// LOWER:           %[[NEXT:.*]] = arith.addi %q_offset, %ns : tensor<16xi32>
// LOWER-NEXT:      scf.yield %s, %[[NEXT]] : tensor<16xf32>, tensor<16xi32>
// LOWER:         %p = tile.addptr %{{.*}}, %p_offset : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
// LOWER-NEXT:    tile.store %p, %acc
// LOWER:         %t_offset = scf.if %pos -> (i32) {
// LOWER:           scf.yield %n : i32
// LOWER:           %[[Z:.*]] = arith.constant 0 : i32
// LOWER-NEXT:      scf.yield %[[Z]] : i32
// LOWER:         %t = tile.addptr %x, %t_offset : !tile.ptr<f32>, i32
// LOWER-NEXT:    %w_offset = scf.while (%y_offset = %t_offset) : (i32) -> i32 {
// LOWER-NEXT:      %y = tile.addptr %x, %y_offset : !tile.ptr<f32>, i32
// LOWER:           scf.condition(%more) %y_offset : i32
// LOWER:         ^bb0(%y2_offset: i32):
// LOWER-NEXT:      %y2 = tile.addptr %x, %y2_offset : !tile.ptr<f32>, i32
// LOWER:           %[[Y3:.*]] = arith.addi %y2_offset, %c1 : i32
// LOWER-NEXT:      scf.yield %[[Y3]] : i32
// LOWER:         %w = tile.addptr %x, %w_offset : !tile.ptr<f32>, i32
// LOWER-NEXT:    %{{.*}} = tile.load %w
// SIMT-LABEL: func.func @carried(
// SIMT:         scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%a = %{{.*}}, %q_offset = %{{.*}}) -> (vector<1xf32>, vector<1xi32>) : i32 {
// SIMT:           simt.load %x[%q_offset] {vec = 1 : i32} : !tile.ptr<f32>, vector<1xi32> -> vector<1xf32>
// SIMT:         scf.while (%y_offset = %{{.*}}) : (i32) -> i32 {
// SIMT:           simt.load %x[%y_offset] {vec = 1 : i32} : !tile.ptr<f32>, i32 -> f32

