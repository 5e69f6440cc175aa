// tile.reduce, tile.scan and tile.yield printed, re-parsed and printed again, in custom and
// generic form; canonicalize and cse keep reductions with different combiners apart.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %opt %s -p canonicalize,cse | filecheck %s --check-prefix=CSE

func.func @argmax(%x: tensor<128xf32>, %i: tensor<128xi32>) -> (f32, i32) {
  %v, %j = tile.reduce %x, %i axis 0 : tensor<128xf32>, tensor<128xi32> -> f32, i32 {
  ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %c = tile.cmpf "ogt", %a, %b : f32 -> i1
    %m = tile.select %c, %a, %b : i1, f32
    %n = tile.select %c, %ai, %bi : i1, i32
    tile.yield %m, %n : f32, i32
  }
  func.return %v, %j : f32, i32
}
// CHECK-LABEL: func.func @argmax(
// CHECK-NEXT:    %v, %j = tile.reduce %x, %i axis 0 : tensor<128xf32>, tensor<128xi32> -> f32, i32 {
// CHECK-NEXT:    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
// CHECK:           tile.yield %m, %n : f32, i32
// CHECK-NEXT:    }
// GENERIC:       "tile.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}> ({
// GENERIC:         "tile.yield"(%{{.*}}, %{{.*}}) : (f32, i32) -> ()

func.func @rows(%x: tensor<16x64xf16, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>) -> tensor<16xf16, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> {
  %s = tile.reduce %x axis 1 : tensor<16x64xf16, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16xf16, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> {
  ^bb0(%a: f16, %b: f16):
    %c = arith.addf %a, %b : f16
    tile.yield %c : f16
  }
  func.return %s : tensor<16xf16, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
}
// CHECK-LABEL: func.func @rows(
// CHECK:         tile.reduce %x axis 1 : tensor<16x64xf16, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16xf16, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> {

func.func @scans(%x: tensor<8x32xi32>) -> (tensor<8x32xi32>, tensor<8x32xi32>) {
  %f = tile.scan %x axis 1 : tensor<8x32xi32> -> tensor<8x32xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.addi %a, %b : i32
    tile.yield %c : i32
  }
  %r = tile.scan %x axis 0 reverse : tensor<8x32xi32> -> tensor<8x32xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.muli %a, %b : i32
    tile.yield %c : i32
  }
  func.return %f, %r : tensor<8x32xi32>, tensor<8x32xi32>
}
// CHECK-LABEL: func.func @scans(
// CHECK-NEXT:    %f = tile.scan %x axis 1 : tensor<8x32xi32> -> tensor<8x32xi32> {
// CHECK:         %r = tile.scan %x axis 0 reverse : tensor<8x32xi32> -> tensor<8x32xi32> {
// CHECK:             arith.muli
// GENERIC:       "tile.scan"(%{{.*}}) <{axis = 1 : i32}> ({
// GENERIC:       "tile.scan"(%{{.*}}) <{axis = 0 : i32, reverse}> ({

func.func @cse(%x: tensor<64xf32>) -> (f32, f32, f32) {
  %s = tile.reduce %x axis 0 : tensor<64xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tile.yield %c : f32
  }
  %m = tile.reduce %x axis 0 : tensor<64xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.maximumf %a, %b : f32
    tile.yield %c : f32
  }
  %t = tile.reduce %x axis 0 : tensor<64xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tile.yield %c : f32
  }
  %unused = tile.reduce %x axis 0 : tensor<64xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.minimumf %a, %b : f32
    tile.yield %c : f32
  }
  func.return %s, %m, %t : f32, f32, f32
}
// CSE-LABEL: func.func @cse(
// CSE-NEXT:    %s = tile.reduce %x axis 0
// CSE:           arith.addf
// CSE:         %m = tile.reduce %x axis 0
// CSE:           arith.maximumf
// CSE-NOT:     tile.reduce
// CSE:         func.return %s, %m, %s : f32, f32, f32
