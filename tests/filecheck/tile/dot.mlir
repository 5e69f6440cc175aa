// RUN: %opt %s | %opt | filecheck %s

// tile.dot round trips: f16 operands into f32, f32 in tf32, int8 into i32.
func.func @dot(%a: tensor<32x16xf16>, %b: tensor<16x64xf16>, %c: tensor<32x64xf32>,
               %x: tensor<16x16xf32>, %y: tensor<16x16xf32>,
               %p: tensor<16x32xi8>, %q: tensor<32x16xi8>, %r: tensor<16x16xi32>) {
  // CHECK: %{{.*}} = tile.dot %a, %b, %c precision "ieee" : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  %0 = tile.dot %a, %b, %c precision "ieee" : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  // CHECK: tile.dot %x, %y, %x precision "tf32" : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %1 = tile.dot %x, %y, %x precision "tf32" : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: tile.dot %p, %q, %r precision "ieee" : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  %2 = tile.dot %p, %q, %r precision "ieee" : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  func.return
}
