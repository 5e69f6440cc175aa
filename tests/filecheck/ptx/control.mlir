// simt-to-ptx of structured control flow: scf.for/if/while become labels, guarded
// branches and ptx.reg registers written by ptx.assign (a vector value is K registers).
// A yield is a parallel copy: a value read by the same yield's moves (the swap below)
// is copied first. The ptx ops round-trip.
// RUN: %opt %s -p simt-to-ptx | filecheck %s
// RUN: %opt %s -p simt-to-ptx | %opt --print-op-generic | %opt | filecheck %s

func.func @loops(%x: !tile.ptr<f32>, %n: i32) attributes {simt.num_warps = 1 : i32} {
  %tid = simt.thread_id : i32
  %tb = vector.broadcast %tid : i32 to vector<2xi32>
  %lanes = arith.constant dense<[0, 32]> : vector<2xi32>
  %i = arith.addi %tb, %lanes : vector<2xi32>
  %zero = arith.constant dense<0.0> : vector<2xf32>
  %one = arith.constant dense<1.0> : vector<2xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc, %b = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero, %b0 = %one) -> (vector<2xf32>, vector<2xf32>) : i32 {
    %s = arith.addf %a, %b0 : vector<2xf32>
    scf.yield %b0, %s : vector<2xf32>, vector<2xf32>
  }
  %pos = tile.cmpi "sgt", %n, %c0 : i32 -> i1
  %r = scf.if %pos -> (vector<2xf32>) {
    scf.yield %acc : vector<2xf32>
  } else {
    %neg = arith.negf %b : vector<2xf32>
    scf.yield %neg : vector<2xf32>
  }
  %w = scf.while (%v = %n) : (i32) -> i32 {
    %more = tile.cmpi "sgt", %v, %c1 : i32 -> i1
    scf.condition(%more) %v : i32
  } do {
  ^bb0(%v2: i32):
    %h = arith.shrsi %v2, %c1 : i32
    scf.yield %h : i32
  }
  simt.store %x[%i], %r : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  func.return
}
// CHECK-LABEL: func.func @loops(
// CHECK:         %[[N:.*]] = ptx.ld_param %n : i32 -> i32
// CHECK:         %[[ZERO:.*]] = ptx.lanes %{{.*}} [0, 0] : f32 -> vector<2xf32>
// CHECK:         %[[ONE:.*]] = ptx.lanes %{{.*}} [0, 0] : f32 -> vector<2xf32>
// CHECK:         %[[C0:.*]] = ptx.mov_imm 0 : i32
// CHECK-NEXT:    %[[C1:.*]] = ptx.mov_imm 1 : i32
// CHECK-NEXT:    %[[K:.*]] = ptx.reg : i32
// CHECK-NEXT:    %[[A:.*]] = ptx.reg : vector<2xf32>
// CHECK-NEXT:    %[[B:.*]] = ptx.reg : vector<2xf32>
// CHECK-NEXT:    ptx.assign %[[K]], %[[C0]] : i32, i32
// CHECK-NEXT:    ptx.assign %[[A]], %[[ZERO]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.assign %[[B]], %[[ONE]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.label "$L__for1"
// CHECK-NEXT:    %[[DONE:.*]] = ptx.inst "setp.ge.s32" %[[K]], %[[N]] : (i32, i32) -> i1
// CHECK-NEXT:    ptx.bra "$L__for1_end" if %[[DONE]]
// CHECK-NEXT:    %[[S:.*]] = ptx.inst "add.rn.f32" %[[A]], %[[B]] : (vector<2xf32>, vector<2xf32>) -> vector<2xf32>
// CHECK-NEXT:    %[[NEXT:.*]] = ptx.inst "add.s32" %[[K]], %[[C1]] : (i32, i32) -> i32
// CHECK-NEXT:    %[[OLDB:.*]] = ptx.inst "mov.f32" %[[B]] : (vector<2xf32>) -> vector<2xf32>
// CHECK-NEXT:    ptx.assign %[[K]], %[[NEXT]] : i32, i32
// CHECK-NEXT:    ptx.assign %[[A]], %[[OLDB]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.assign %[[B]], %[[S]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.bra "$L__for1"
// CHECK-NEXT:    ptx.label "$L__for1_end"
// CHECK-NEXT:    %[[POS:.*]] = ptx.inst "setp.gt.s32" %[[N]], %[[C0]] : (i32, i32) -> i1
// CHECK-NEXT:    %[[R:.*]] = ptx.reg : vector<2xf32>
// CHECK-NEXT:    ptx.bra "$L__if2_else" if %[[POS]] negated
// CHECK-NEXT:    ptx.assign %[[R]], %[[A]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.bra "$L__if2_end"
// CHECK-NEXT:    ptx.label "$L__if2_else"
// CHECK-NEXT:    %[[NEG:.*]] = ptx.inst "neg.f32" %[[B]] : (vector<2xf32>) -> vector<2xf32>
// CHECK-NEXT:    ptx.assign %[[R]], %[[NEG]] : vector<2xf32>, vector<2xf32>
// CHECK-NEXT:    ptx.label "$L__if2_end"
// CHECK-NEXT:    %[[V:.*]] = ptx.reg : i32
// CHECK-NEXT:    %[[W:.*]] = ptx.reg : i32
// CHECK-NEXT:    ptx.assign %[[V]], %[[N]] : i32, i32
// CHECK-NEXT:    ptx.label "$L__while3"
// CHECK-NEXT:    %[[MORE:.*]] = ptx.inst "setp.gt.s32" %[[V]], %[[C1]] : (i32, i32) -> i1
// CHECK-NEXT:    ptx.assign %[[W]], %[[V]] : i32, i32
// CHECK-NEXT:    ptx.bra "$L__while3_end" if %[[MORE]] negated
// CHECK-NEXT:    %[[H:.*]] = ptx.inst "shr.s32" %[[W]], %[[C1]] : (i32, i32) -> i32
// CHECK-NEXT:    ptx.assign %[[V]], %[[H]] : i32, i32
// CHECK-NEXT:    ptx.bra "$L__while3"
// CHECK-NEXT:    ptx.label "$L__while3_end"
// CHECK:         ptx.st_global %{{.*}}, %[[R]] {vec = 1 : i32} : vector<2xi64>, vector<2xf32>

// A constant first made inside a branch is made again after it: the branch may not run.
func.func @memo(%x: !tile.ptr<i32>, %c: i1) attributes {simt.num_warps = 1 : i32} {
  %r = scf.if %c -> (i32) {
    %seven = arith.constant 7 : i32
    scf.yield %seven : i32
  } else {
    %zero = arith.constant 0 : i32
    scf.yield %zero : i32
  }
  %seven2 = arith.constant 7 : i32
  %s = arith.addi %r, %seven2 : i32
  simt.store %x[%s], %s : !tile.ptr<i32>, i32, i32
  func.return
}
// CHECK-LABEL: func.func @memo(
// CHECK:         ptx.bra "$L__if1_else" if %{{.*}} negated
// CHECK-NEXT:    %[[IN:.*]] = ptx.mov_imm 7 : i32
// CHECK:         ptx.label "$L__if1_end"
// CHECK-NEXT:    %[[OUT:.*]] = ptx.mov_imm 7 : i32
// CHECK-NEXT:    ptx.inst "add.s32" %{{.*}}, %[[OUT]] : (i32, i32) -> i32
