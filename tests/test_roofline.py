"""benchmarks/roofline.py without a GPU: its flop and byte counts, the roof it draws and
the plot itself (matplotlib, the optional ``plot`` extra)."""

import pytest

from benchmarks import roofline
from compiler.jit import availability


def test_counts_follow_from_the_shapes():
    work = roofline.workloads()
    vector, softmax, layernorm, matmul = work.values()
    assert vector.intensity == pytest.approx(1 / 12)  # one add per two f32 reads, one write
    assert softmax.nbytes == 2 * 4 * roofline.ROWS * roofline.COLS
    assert layernorm.flops / softmax.flops == pytest.approx(7 / 5)
    assert layernorm.nbytes > softmax.nbytes
    # 2 n^3 flops over three n x n f16 matrices: n / 3 flops per byte
    assert matmul.intensity == pytest.approx(roofline.MATMUL_N / 3)


def test_bandwidth_from_clock_and_bus_matches_datasheets():
    # H100 SXM: HBM3 at 2619 MHz on 5120 bits, 3.35 TB/s by datasheet
    assert roofline.hbm_bandwidth(2_619_000, 5120) == pytest.approx(3.35e12, rel=0.01)
    # H200: HBM3e at 3201 MHz on 6144 bits, 4.8 TB/s by datasheet
    assert roofline.hbm_bandwidth(3_201_000, 6144) == pytest.approx(4.8e12, rel=0.03)
    assert roofline.hbm_bandwidth(None, 6144) == roofline.H200_BANDWIDTH
    assert roofline.hbm_bandwidth(0, None) == roofline.H200_BANDWIDTH


def test_roof_bends_at_the_ridge():
    bandwidth = roofline.H200_BANDWIDTH
    knee = roofline.ridge(bandwidth)
    assert roofline.attainable(knee, bandwidth) == pytest.approx(roofline.TENSOR_F16_PEAK)
    assert roofline.attainable(knee / 10, bandwidth) == pytest.approx(knee / 10 * bandwidth)
    assert roofline.attainable(knee * 10, bandwidth) == roofline.TENSOR_F16_PEAK
    # the memory-bound kernels sit left of the ridge, the matmul right of it
    sides = [w.intensity < knee for w in roofline.workloads().values()]
    assert sides == [True, True, True, False]


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    bandwidth = roofline.H200_BANDWIDTH
    points = [(w.name, w.intensity, 0.6 * roofline.attainable(w.intensity, bandwidth))
              for w in roofline.workloads().values()]
    path = tmp_path / "roofline.png"
    roofline.plot(points, bandwidth, path, "made-up points")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000


@pytest.mark.gpu
def test_benchmarked_kernels_match_torch_on_a_gpu():
    """What the benchmark times is right: each launch, checked against torch."""
    torch = pytest.importorskip("torch")
    ok, why = availability("ptx")
    if not ok or not torch.cuda.is_available():
        pytest.skip(f"ptx: {why}")
    launches = roofline.launches(torch)
    assert list(launches) == list(roofline.workloads())
    for run, check in launches.values():
        run()
        check()
