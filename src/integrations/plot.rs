//! Pictures of an evaluation, as SVG files (plotters, SVG backend only): the reliability diagram
//! of the calibration bins, the unsure band's accuracy–coverage curve and the model's per-epoch
//! learning curve.

use std::path::Path;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::learn::calibration::CalibrationBin;

const SIZE: (u32, u32) = (640, 480);

fn failed(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(path, std::io::Error::other(e.to_string()))
}

/// Accuracy against mean predicted probability per bin, with the diagonal of perfect calibration;
/// each bin is a bar of its width whose height is its accuracy.
pub fn reliability_diagram(bins: &[CalibrationBin], ece: f64, path: &Path) -> Result<()> {
    let draw = || -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("Reliability (ECE {ece:.3})"), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..1f64, 0f64..1f64)?;
        chart
            .configure_mesh()
            .x_desc("probability of the predicted label")
            .y_desc("accuracy")
            .draw()?;
        chart.draw_series(bins.iter().filter(|b| b.examples > 0).map(|b| {
            Rectangle::new(
                [(b.lower, 0.0), (b.upper, 1.0 - b.error_rate)],
                BLUE.mix(0.4).filled(),
            )
        }))?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 0.0), (1.0, 1.0)],
                BLACK.stroke_width(1),
            ))?
            .label("perfect calibration");
        chart.draw_series(
            bins.iter()
                .filter(|b| b.examples > 0)
                .map(|b| Circle::new((b.mean_confidence, 1.0 - b.error_rate), 4, RED.filled())),
        )?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| failed(path, e))
}

/// The unsure band's trade-off: accuracy on the documents kept against their share, one point
/// per `--min-prob` threshold, labelled with it: (threshold, share kept, accuracy on the kept
/// documents when any is kept).
pub fn coverage_curve(points: &[(f64, f64, Option<f64>)], path: &Path) -> Result<()> {
    let draw = || -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let kept: Vec<(f64, f64, f64)> = points
            .iter()
            .filter_map(|&(min_prob, share, accuracy)| accuracy.map(|a| (share, a, min_prob)))
            .collect();
        let low = kept.iter().map(|k| k.1).fold(1.0f64, f64::min);
        let floor = ((low * 10.0).floor() / 10.0).clamp(0.0, 0.9);
        let mut chart = ChartBuilder::on(&root)
            .caption("Accuracy against coverage (--min-prob)", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..1f64, floor..1f64)?;
        chart
            .configure_mesh()
            .x_desc("share of documents kept (the rest unsure)")
            .y_desc("accuracy on the kept documents")
            .draw()?;
        let line: Vec<(f64, f64)> = kept.iter().map(|k| (k.0, k.1)).collect();
        chart.draw_series(LineSeries::new(line, BLUE.stroke_width(2)))?;
        chart.draw_series(kept.iter().map(|&(x, y, p)| {
            EmptyElement::at((x, y))
                + Circle::new((0, 0), 4, BLUE.filled())
                + Text::new(format!("{p}"), (6, -14), ("sans-serif", 12))
        }))?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| failed(path, e))
}

/// Accuracy per training epoch.
pub fn learning_curve(accuracy: &[f64], what: &str, path: &Path) -> Result<()> {
    let draw = || -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let low = accuracy.iter().copied().fold(1.0f64, f64::min);
        let floor = ((low * 10.0).floor() / 10.0).clamp(0.0, 0.9);
        let epochs = accuracy.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("Learning curve ({what})"), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.5f64..epochs + 0.5, floor..1f64)?;
        chart
            .configure_mesh()
            .x_labels(accuracy.len().min(20))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("epoch")
            .y_desc("accuracy")
            .draw()?;
        let points: Vec<(f64, f64)> = accuracy
            .iter()
            .enumerate()
            .map(|(i, &a)| ((i + 1) as f64, a))
            .collect();
        chart.draw_series(LineSeries::new(points.clone(), BLUE.stroke_width(2)))?;
        chart.draw_series(points.into_iter().map(|p| Circle::new(p, 4, BLUE.filled())))?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| failed(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_files_with_their_content() {
        let dir = tempfile::tempdir().unwrap();
        let bins: Vec<CalibrationBin> = (0..10)
            .map(|b| CalibrationBin {
                lower: b as f64 / 10.0,
                upper: (b + 1) as f64 / 10.0,
                examples: b,
                errors: 0,
                error_rate: 0.0,
                mean_confidence: b as f64 / 10.0 + 0.05,
            })
            .collect();
        let path = dir.path().join("r.svg");
        reliability_diagram(&bins, 0.1234, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("ECE 0.123"),
            "{svg}"
        );
        // Nine non-empty bins: nine bars and nine points.
        assert_eq!(svg.matches("<circle").count(), 9);
        let path = dir.path().join("l.svg");
        learning_curve(&[0.8, 0.9, 0.95], "online training accuracy", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("epoch"));
    }
}
