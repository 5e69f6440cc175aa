// canonicalize: a dot into zero whose only use adds it to a tile becomes a dot into that
// tile (attention's acc * alpha + tl.dot(p, v)); not when the dot's accumulator is not
// zero, or its result is also used elsewhere.
// RUN: %opt %s -p canonicalize | filecheck %s

func.func @sum_in_accumulator(%a: tensor<32x16xf16>, %b: tensor<16x64xf16>, %c: tensor<32x64xf32>,
                              %p: tensor<16x32xi8>, %q: tensor<32x16xi8>, %r: tensor<16x16xi32>)
    -> (tensor<32x64xf32>, tensor<16x16xi32>) {
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> tensor<32x64xf32>
  %d = tile.dot %a, %b, %z precision "ieee" : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  %s = arith.addf %c, %d : tensor<32x64xf32>
  %izero = arith.constant 0 : i32
  %iz = tile.splat %izero : i32 -> tensor<16x16xi32>
  %di = tile.dot %p, %q, %iz precision "ieee" : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  %si = arith.addi %di, %r : tensor<16x16xi32>
  func.return %s, %si : tensor<32x64xf32>, tensor<16x16xi32>
}
// CHECK-LABEL: func.func @sum_in_accumulator(
// CHECK-NEXT:    %[[D:.*]] = tile.dot %a, %b, %c precision "ieee"
// CHECK-NEXT:    %[[DI:.*]] = tile.dot %p, %q, %r precision "ieee"
// CHECK-NEXT:    func.return %[[D]], %[[DI]]

func.func @kept(%a: tensor<32x16xf16>, %b: tensor<16x64xf16>, %c: tensor<32x64xf32>)
    -> (tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %one = arith.constant 1.0 : f32
  %o = tile.splat %one : f32 -> tensor<32x64xf32>
  %d = tile.dot %a, %b, %o precision "ieee" : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  %s = arith.addf %c, %d : tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %z = tile.splat %zero : f32 -> tensor<32x64xf32>
  %e = tile.dot %a, %b, %z precision "ieee" : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  %t = arith.addf %c, %e : tensor<32x64xf32>
  func.return %s, %t, %e : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}
// CHECK-LABEL: func.func @kept(
// CHECK:         %d = tile.dot %a, %b, %o
// CHECK-NEXT:    %s = arith.addf %c, %d
// CHECK:         %e = tile.dot %a, %b, %z
// CHECK-NEXT:    %t = arith.addf %c, %e
