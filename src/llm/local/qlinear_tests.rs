//! Tests of [`super`]: the packed and tiled products against candle's own kernels, bit for bit.

use super::*;
use crate::rng::SplitMix64;
use candle_core::Device;

fn random(rng: &mut SplitMix64, shape: (usize, usize), scale: f32) -> Tensor {
    let v: Vec<f32> = (0..shape.0 * shape.1)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale)
        .collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

fn row_bits(t: &Tensor, i: usize) -> Vec<u32> {
    t.get(i).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn q6k_rows_together_get_candles_one_row_bits() {
    // Q6_K in tiles (where the CPU has VNNI): several rows at once, alone or in a group with
    // a packed layer, each row as candle's one-row kernel gives it; one row is candle's own.
    let mut rng = SplitMix64(12);
    for (n, k) in [(37, 512), (64, 768), (16, 256)] {
        let w = random(&mut rng, (n, k), 0.3);
        let ours = Linear::new(QTensor::quantize(&w, GgmlDType::Q6K).unwrap()).unwrap();
        let theirs = Linear::candle(QTensor::quantize(&w, GgmlDType::Q6K).unwrap()).unwrap();
        let q5 = Linear::new(QTensor::quantize(&random(&mut rng, (24, k), 0.3), GgmlDType::Q5_0).unwrap()).unwrap();
        assert_eq!(matches!(ours, Linear::Q6k(..)), tiles::pay());
        for rows in 1..=MAX_ROWS {
            let x = random(&mut rng, (rows, k), 2.0);
            let flat = x.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let both = Linear::apply_group(&[&q5, &ours], &flat, rows).unwrap();
            let tensor = ours.forward_rows(&x).unwrap();
            for i in 0..rows {
                let alone = theirs.forward(&x.narrow(0, i, 1).unwrap()).unwrap();
                let expect = row_bits(&alone, 0);
                assert_eq!(row_bits(&tensor, i), expect, "{n} x {k}: row {i} of {rows}");
                let grouped: Vec<u32> = both[1][i * n..(i + 1) * n].iter().map(|v| v.to_bits()).collect();
                assert_eq!(grouped, expect, "{n} x {k} in a group: row {i} of {rows}");
            }
        }
    }
}

#[test]
fn formats_claimed_row_independent_give_each_row_its_bits_alone() {
    // What lets sequences share a step: in a multi-row call each row gets the bits it gets
    // alone, for every row count up to MAX_ROWS, on whatever kernel tier this CPU selects
    // (shapes that take candle's repacked tiles: n a multiple of 32, k of 256).
    let mut rng = SplitMix64(11);
    let mut cases: Vec<Linear> = ROW_INDEPENDENT
        .iter()
        .map(|&dtype| Linear::candle(QTensor::quantize(&random(&mut rng, (64, 512), 0.3), dtype).unwrap()).unwrap())
        .collect();
    for dtype in [GgmlDType::Q4_1, GgmlDType::Q5_0] {
        cases.push(Linear::new(QTensor::quantize(&random(&mut rng, (64, 512), 0.3), dtype).unwrap()).unwrap());
    }
    for layer in &cases {
        assert!(layer.rows_independent());
        for rows in 2..=MAX_ROWS {
            let x = random(&mut rng, (rows, 512), 2.0);
            let together = layer.forward(&x).unwrap();
            for i in 0..rows {
                let alone = layer.forward(&x.narrow(0, i, 1).unwrap()).unwrap();
                assert_eq!(row_bits(&together, i), row_bits(&alone, 0), "{layer:?}: row {i} of {rows}");
            }
        }
    }
    // A group of layers on one input gives each layer's own output.
    let x = random(&mut rng, (3, 512), 2.0);
    let group: Vec<&Linear> = cases.iter().collect();
    for (layer, out) in cases.iter().zip(Linear::forward_group(&group, &x).unwrap()) {
        let alone = layer.forward(&x).unwrap();
        for i in 0..3 {
            assert_eq!(row_bits(&out, i), row_bits(&alone, i));
        }
    }
    // A format read row by row gives the same bits through forward_rows.
    let q6 = Linear::candle(QTensor::quantize(&random(&mut rng, (64, 512), 0.3), GgmlDType::Q6K).unwrap()).unwrap();
    assert!(!q6.rows_independent());
    let x = random(&mut rng, (4, 512), 2.0);
    let rows = q6.forward_rows(&x).unwrap();
    for i in 0..4 {
        assert_eq!(row_bits(&rows, i), row_bits(&q6.forward(&x.narrow(0, i, 1).unwrap()).unwrap(), 0));
    }
}

#[test]
fn packed_layers_equal_candle_bit_for_bit() {
    let mut rng = SplitMix64(3);
    for dtype in [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q8_0] {
        for (n, k) in [(96, 64), (200, 576), (37, 128), (48, 896)] {
            let w = QTensor::quantize(&random(&mut rng, (n, k), 0.3), dtype).unwrap();
            let deq = w.dequantize(&Device::Cpu).unwrap();
            let copy = || QTensor::quantize(&deq, dtype).unwrap();
            let packs = dtype != GgmlDType::Q8_0 || tiles::pay();
            assert_eq!(matches!(Linear::new(copy()).unwrap(), Linear::Packed(_)), packs, "{dtype:?}");
            let theirs = Linear::candle(w).unwrap();
            // Both layouts, whichever this CPU would choose.
            let layouts: &[bool] = if dtype == GgmlDType::Q8_0 { &[true] } else { &[false, true] };
            for (&tiled, rows) in layouts.iter().flat_map(|t| [1, 2, 5, 64].map(|r| (t, r))) {
                let ours = Linear::Packed(Arc::new(Packed::laid_out(&copy(), tiled).unwrap()));
                let mut x = random(&mut rng, (rows, k), 2.0);
                if rows == 2 {
                    // An all-zero row (scale 0) and one with a single large value.
                    let mut v = x.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                    v[..k].iter_mut().for_each(|e| *e = 0.0);
                    v[k + 3] = 1e4;
                    x = Tensor::from_vec(v, (rows, k), &Device::Cpu).unwrap();
                }
                let a = ours.forward(&x).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let b = theirs.forward(&x).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let same = a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(same, "{dtype:?} {n}x{k}, {rows} rows, tiled {tiled}: {:?} vs {:?}", &a[..4], &b[..4]);
            }
        }
    }
}
