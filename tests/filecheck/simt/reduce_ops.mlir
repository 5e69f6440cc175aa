// simt.shuffle_up / shuffle_down round trips, and their verifier.
// RUN: %opt %s --split-input-file | %opt --split-input-file | filecheck %s
// RUN: %opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @shifts(%v: vector<4xf32>, %s: i1) -> (vector<4xf32>, i1) {
  %u = simt.shuffle_up %v, 1 : vector<4xf32>
  %d = simt.shuffle_down %s, 16 : i1
  func.return %u, %d : vector<4xf32>, i1
}
// CHECK-LABEL: func.func @shifts(
// CHECK-NEXT:    %u = simt.shuffle_up %v, 1 : vector<4xf32>
// CHECK-NEXT:    %d = simt.shuffle_down %s, 16 : i1
// GENERIC:       "simt.shuffle_up"(%{{.*}}) <{delta = 1 : i32}> : (vector<4xf32>) -> vector<4xf32>
