// inline-slow-paths: in a kernel with a wgmma, a correctly rounded f32 division becomes
// inline f64 instructions (ptxas would call a slow path, and a call serializes every
// wgmma of the kernel); a kernel without wgmma keeps div.rn.f32.
// RUN: %opt %s -p inline-slow-paths | filecheck %s

func.func @with_wgmma(%desc: i64, %c: vector<32xf32>, %x: vector<2xf32>, %y: f32) {
  %d = ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" %desc, %desc, %c : i64, i64, vector<32xf32>
  %q = ptx.inst "div.rn.f32" %x, %y : (vector<2xf32>, f32) -> vector<2xf32>
  func.return
}

// CHECK-LABEL: func.func @with_wgmma
// CHECK-NOT:   div.rn.f32
// CHECK:       %[[A:.*]] = ptx.inst "cvt.f64.f32" %x : (vector<2xf32>) -> vector<2xf64>
// CHECK-NEXT:  %[[B:.*]] = ptx.inst "cvt.f64.f32" %y : (f32) -> f64
// CHECK-NEXT:  %[[MINUS:.*]] = ptx.inst "neg.f64" %[[B]] : (f64) -> f64
// CHECK-NEXT:  %[[ONE:.*]] = ptx.mov_imm 1.000000e+00 : f64
// CHECK-NEXT:  %[[R0:.*]] = ptx.inst "rcp.approx.ftz.f64" %[[B]] : (f64) -> f64
// CHECK-NEXT:  %[[E1:.*]] = ptx.inst "fma.rn.f64" %[[MINUS]], %[[R0]], %[[ONE]]
// CHECK-NEXT:  %[[R1:.*]] = ptx.inst "fma.rn.f64" %[[R0]], %[[E1]], %[[R0]]
// CHECK-NEXT:  %[[E2:.*]] = ptx.inst "fma.rn.f64" %[[MINUS]], %[[R1]], %[[ONE]]
// CHECK-NEXT:  %[[R2:.*]] = ptx.inst "fma.rn.f64" %[[R1]], %[[E2]], %[[R1]]
// CHECK-NEXT:  %[[Q:.*]] = ptx.inst "mul.rn.f64" %[[A]], %[[R2]]
// CHECK-NEXT:  %[[REM:.*]] = ptx.inst "fma.rn.f64" %[[MINUS]], %[[Q]], %[[A]]
// CHECK-NEXT:  %[[QC:.*]] = ptx.inst "fma.rn.f64" %[[REM]], %[[R2]], %[[Q]]
// Both operands finite and not zero: their product is (ordered comparisons).
// CHECK-NEXT:  %[[PROD:.*]] = ptx.inst "mul.rn.f64" %[[A]], %[[B]]
// CHECK-NEXT:  %[[SIZE:.*]] = ptx.inst "abs.f64" %[[PROD]]
// CHECK-NEXT:  %[[INF:.*]] = ptx.mov_imm 0x7ff0000000000000 : f64
// CHECK-NEXT:  %[[ZERO:.*]] = ptx.mov_imm 0.000000e+00 : f64
// CHECK-NEXT:  %[[ABOVE:.*]] = ptx.inst "setp.gt.f64" %[[SIZE]], %[[ZERO]]
// CHECK-NEXT:  %[[BELOW:.*]] = ptx.inst "setp.lt.f64" %[[SIZE]], %[[INF]]
// CHECK-NEXT:  %[[OK:.*]] = ptx.inst "and.pred" %[[ABOVE]], %[[BELOW]]
// The special values: a zero divisor becomes an infinity, an infinite one a zero.
// CHECK-NEXT:  %[[ISZERO:.*]] = ptx.inst "setp.eq.f64" %[[B]], %[[ZERO]]
// CHECK-NEXT:  %[[BSIZE:.*]] = ptx.inst "abs.f64" %[[B]]
// CHECK-NEXT:  %[[ISINF:.*]] = ptx.inst "setp.eq.f64" %[[BSIZE]], %[[INF]]
// CHECK-NEXT:  %[[TOINF:.*]] = ptx.inst "copysign.f64" %[[B]], %[[INF]]
// CHECK-NEXT:  %[[TOZERO:.*]] = ptx.inst "copysign.f64" %[[B]], %[[ZERO]]
// CHECK-NEXT:  %[[FLIP:.*]] = ptx.inst "selp.b64" %[[TOINF]], %[[TOZERO]], %[[ISZERO]]
// CHECK-NEXT:  %[[EDGE:.*]] = ptx.inst "or.pred" %[[ISZERO]], %[[ISINF]]
// CHECK-NEXT:  %[[S:.*]] = ptx.inst "selp.b64" %[[FLIP]], %[[B]], %[[EDGE]]
// CHECK-NEXT:  %[[PLAIN:.*]] = ptx.inst "mul.rn.f64" %[[A]], %[[S]]
// CHECK-NEXT:  %[[PICK:.*]] = ptx.inst "selp.b64" %[[QC]], %[[PLAIN]], %[[OK]]
// CHECK-NEXT:  %{{.*}} = ptx.inst "cvt.rn.f32.f64" %[[PICK]] : (vector<2xf64>) -> vector<2xf32>

func.func @without_wgmma(%x: f32, %y: f32) {
  %q = ptx.inst "div.rn.f32" %x, %y : (f32, f32) -> f32
  func.return
}

// CHECK-LABEL: func.func @without_wgmma
// CHECK:       ptx.inst "div.rn.f32" %x, %y : (f32, f32) -> f32
