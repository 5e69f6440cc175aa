// expand-math: the math functions no GPU target has become arith/math/tile ops on tiles
// and scalars (erf keeps the target's exp2; f32 exp stays for the fast instruction, f64 exp
// is expanded; fmod is a loop of long-division steps); integer bit counts stay.
// RUN: %opt %s -p expand-math | filecheck %s

func.func @erf(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = math.erf %x : tensor<64xf32>
  func.return %e : tensor<64xf32>
}
// CHECK-LABEL: func.func @erf(
// CHECK-NOT:     math.erf
// CHECK:         math.exp2 %{{.*}} : tensor<64xf32>
// CHECK-NOT:     math.erf
// CHECK:         func.return

func.func @asin_half(%x: tensor<16xf16>) -> tensor<16xf16> {
  %a = math.asin %x : tensor<16xf16>
  func.return %a : tensor<16xf16>
}
// CHECK-LABEL: func.func @asin_half(
// CHECK:         arith.extf %x : tensor<16xf16> to tensor<16xf32>
// CHECK-NOT:     math.asin
// CHECK:         math.rsqrt %{{.*}} : tensor<16xf32>
// CHECK:         %[[R:.*]] = arith.truncf %{{.*}} : tensor<16xf32> to tensor<16xf16>
// CHECK-NEXT:    func.return %[[R]]

func.func @lgamma_scalar(%x: f32) -> f32 {
  %g = tile.libm "lgamma"(%x) : (f32) -> f32
  func.return %g : f32
}
// CHECK-LABEL: func.func @lgamma_scalar(
// CHECK-NOT:     tile.libm
// CHECK:         tile.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f32
// CHECK-NOT:     tile.libm
// CHECK:         func.return

func.func @exp_widths(%x: tensor<8xf32>, %d: tensor<8xf64>) -> (tensor<8xf32>, tensor<8xf64>) {
  %a = math.exp %x : tensor<8xf32>
  %b = math.exp %d : tensor<8xf64>
  func.return %a, %b : tensor<8xf32>, tensor<8xf64>
}
// CHECK-LABEL: func.func @exp_widths(
// CHECK:         %[[A:.*]] = math.exp %x : tensor<8xf32>
// CHECK-NOT:     math.exp %d
// CHECK:         math.roundeven %{{.*}} : tensor<8xf64>
// CHECK:         func.return %[[A]], %{{.*}} : tensor<8xf32>, tensor<8xf64>

func.func @fmod(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = tile.libm "fmod"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}
// CHECK-LABEL: func.func @fmod(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<8xf32>, tensor<8xf32>) : i32 {
// CHECK:           tile.arith_fence %{{.*}} : tensor<8xf32>
// CHECK:           scf.yield
// CHECK-NOT:     tile.libm

func.func @bits(%i: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %p = math.ctpop %i : tensor<8xi32>
  %b = tile.brev %i : tensor<8xi32>
  func.return %p, %b : tensor<8xi32>, tensor<8xi32>
}
// CHECK-LABEL: func.func @bits(
// CHECK-NEXT:    %p = math.ctpop %i : tensor<8xi32>
// CHECK-NEXT:    %b = tile.brev %i : tensor<8xi32>
