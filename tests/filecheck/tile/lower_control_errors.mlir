// lower-control refuses a pointer that moves to another array through control flow.
// RUN: not %opt %s -p lower-control 2>&1 | filecheck %s

// CHECK: error: a pointer carried through control flow must stay in one array (here it moves from x to y)
func.func @moves(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %c: i1) {
  %p = scf.if %c -> (!tile.ptr<f32>) {
    scf.yield %x : !tile.ptr<f32>
  } else {
    scf.yield %y : !tile.ptr<f32>
  }
  %v = tile.load %p : !tile.ptr<f32> -> f32
  func.return
}
