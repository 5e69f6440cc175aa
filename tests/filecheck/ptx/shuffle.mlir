// vector.shuffle of one vector is register renaming: ptx.lanes, which prints nothing.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @rows(%x: !tile.ptr<f32>) attributes {simt.num_warps = 1 : i32} {
  %tid = simt.thread_id : i32
  %t = vector.broadcast %tid : i32 to vector<2xi32>
  %c = arith.constant dense<[0, 32]> : vector<2xi32>
  %i = arith.addi %t, %c : vector<2xi32>
  %v = simt.load %x[%i] : !tile.ptr<f32>, vector<2xi32> -> vector<2xf32>
  %b = vector.shuffle %v, %v [0, 0, 1, 1] : vector<2xf32>, vector<2xf32>
  %j = vector.shuffle %i, %i [1, 0, 3, 2] : vector<2xi32>, vector<2xi32>
  simt.store %x[%j], %b : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  func.return
}
// CHECK-LABEL: func.func @rows(
// CHECK:         %[[I:.*]] = ptx.inst "add.s32" {{.*}} -> vector<2xi32>
// CHECK:         %[[V:.*]] = ptx.ld_global {{.*}} -> vector<2xf32>
// CHECK-NEXT:    %[[B:.*]] = ptx.lanes %[[V]] [0, 0, 1, 1] : vector<2xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[J:.*]] = ptx.lanes %[[I]] [1, 0, 1, 0] : vector<2xi32> -> vector<4xi32>
// CHECK:         ptx.st_global %{{.*}}, %[[B]] {vec = 1 : i32} : vector<4xi64>, vector<4xf32>
