// tile.from_fp8/to_fp8 round-trip; lower-fp8 holds fp8 values as i8 bits: pointees,
// arguments, constants (their bits: 448 is 0x7E, -0.5 0xB0, NaN 0x7F, -2 in e5m2 0xC0) and loads
// retyped, bitcasts to i8 gone, and the conversions kept as ops (native=1) or expanded
// into integer and f32 arithmetic (native=0).
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s --split-input-file -p 'lower-fp8{native=1}' | filecheck %s
// RUN: %opt %s --split-input-file -p 'lower-fp8{native=0}' | filecheck %s --check-prefix=EXPAND

func.func @ops(%b: tensor<16xi8>, %f: f32) {
  %x = tile.from_fp8 "e4m3", %b : tensor<16xi8> -> tensor<16xf32>
  %y = tile.to_fp8 "e5m2", %f : f32 -> i8
  func.return
}
// ROUND-LABEL: func.func @ops(
// ROUND-NEXT:    %x = tile.from_fp8 "e4m3", %b : tensor<16xi8> -> tensor<16xf32>
// ROUND-NEXT:    %y = tile.to_fp8 "e5m2", %f : f32 -> i8
// CHECK-LABEL: func.func @ops(
// CHECK-NEXT:    %x = tile.from_fp8 "e4m3", %b : tensor<16xi8> -> tensor<16xf32>
// EXPAND-LABEL: func.func @ops(
// EXPAND-NEXT:    %x = tile.from_fp8 "e4m3", %b : tensor<16xi8> -> tensor<16xf32>

// -----

func.func @convert(%x: !tile.ptr<f8E4M3FN>, %out: !tile.ptr<f8E5M2>, %bits: !tile.ptr<i8>) {
  %r = tile.range 0, 16 : tensor<16xi32>
  %xs = tile.splat %x : !tile.ptr<f8E4M3FN> -> tensor<16x!tile.ptr<f8E4M3FN>>
  %xp = tile.addptr %xs, %r : tensor<16x!tile.ptr<f8E4M3FN>>, tensor<16xi32>
  %v = tile.load %xp : tensor<16x!tile.ptr<f8E4M3FN>> -> tensor<16xf8E4M3FN>
  %w = arith.extf %v : tensor<16xf8E4M3FN> to tensor<16xf32>
  %two = arith.constant -2.0 : f8E5M2
  %twos = tile.splat %two : f8E5M2 -> tensor<16xf8E5M2>
  %n = arith.truncf %w : tensor<16xf32> to tensor<16xf8E5M2>
  %c = arith.constant dense<0.0> : tensor<16xf32>
  %m = tile.cmpf "olt", %w, %c : tensor<16xf32> -> tensor<16xi1>
  %s = tile.select %m, %twos, %n : tensor<16xi1>, tensor<16xf8E5M2>
  %os = tile.splat %out : !tile.ptr<f8E5M2> -> tensor<16x!tile.ptr<f8E5M2>>
  %op = tile.addptr %os, %r : tensor<16x!tile.ptr<f8E5M2>>, tensor<16xi32>
  tile.store %op, %s : tensor<16x!tile.ptr<f8E5M2>>, tensor<16xf8E5M2>
  %big = arith.constant dense<[448.0, -0.5]> : tensor<2xf8E4M3FN>
  %nan = arith.constant 0x7F : f8E4M3FN
  %nanbits = arith.bitcast %nan : f8E4M3FN to i8
  %i = arith.bitcast %big : tensor<2xf8E4M3FN> to tensor<2xi8>
  %r2 = tile.range 0, 2 : tensor<2xi32>
  %bs = tile.splat %bits : !tile.ptr<i8> -> tensor<2x!tile.ptr<i8>>
  %bp = tile.addptr %bs, %r2 : tensor<2x!tile.ptr<i8>>, tensor<2xi32>
  tile.store %bp, %i : tensor<2x!tile.ptr<i8>>, tensor<2xi8>
  tile.store %bits, %nanbits : !tile.ptr<i8>, i8
  func.return
}
// CHECK-LABEL: func.func @convert(%x: !tile.ptr<i8>, %out: !tile.ptr<i8>, %bits: !tile.ptr<i8>) {
// CHECK:         %v = tile.load %xp : tensor<16x!tile.ptr<i8>> -> tensor<16xi8>
// CHECK-NEXT:    %w = tile.from_fp8 "e4m3", %v : tensor<16xi8> -> tensor<16xf32>
// CHECK-NEXT:    %two = arith.constant -64 : i8
// CHECK-NEXT:    %twos = tile.splat %two : i8 -> tensor<16xi8>
// CHECK-NEXT:    %n = tile.to_fp8 "e5m2", %w : tensor<16xf32> -> tensor<16xi8>
// CHECK:         %s = tile.select %m, %twos, %n : tensor<16xi1>, tensor<16xi8>
// CHECK:         tile.store %op, %s : tensor<16x!tile.ptr<i8>>, tensor<16xi8>
// CHECK-NEXT:    %big = arith.constant dense<[126, -80]> : tensor<2xi8>
// CHECK-NEXT:    %nan = arith.constant 127 : i8
// CHECK-NOT:     arith.bitcast
// CHECK:         tile.store %bp, %big : tensor<2x!tile.ptr<i8>>, tensor<2xi8>
// CHECK-NEXT:    tile.store %bits, %nan : !tile.ptr<i8>, i8
// EXPAND-LABEL: func.func @convert(
// EXPAND-NOT:    tile.from_fp8
// EXPAND-NOT:    tile.to_fp8
// EXPAND:        arith.extui %v : tensor<16xi8> to tensor<16xi32>
// EXPAND:        arith.bitcast {{.*}} : tensor<16xi32> to tensor<16xf32>
// EXPAND:        math.roundeven
// EXPAND:        arith.trunci {{.*}} : tensor<16xi32> to tensor<16xi8>
// EXPAND-NOT:    f8E


// -----

// An f32 only narrowed to f16 (the frontend's fp8 -> f16: a dot's operands) is converted
// to f16 at once where the target converts (PTX's cvt gives f16).
func.func @to_half(%v: tensor<16xf8E5M2>) -> (tensor<16xf16>, tensor<16xf16>) {
  %w = arith.extf %v : tensor<16xf8E5M2> to tensor<16xf32>
  %h = arith.truncf %w : tensor<16xf32> to tensor<16xf16>
  %g = arith.truncf %w : tensor<16xf32> to tensor<16xf16>
  func.return %h, %g : tensor<16xf16>, tensor<16xf16>
}
// CHECK-LABEL: func.func @to_half(%v: tensor<16xi8>)
// CHECK-NEXT:    %[[H:.*]] = tile.from_fp8 "e5m2", %v : tensor<16xi8> -> tensor<16xf16>
// CHECK-NEXT:    func.return %[[H]], %[[H]] : tensor<16xf16>, tensor<16xf16>
// EXPAND-LABEL: func.func @to_half(
// EXPAND:        arith.truncf {{.*}} : tensor<16xf32> to tensor<16xf16>
