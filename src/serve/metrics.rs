//! `/metrics` in the Prometheus text format (the `prometheus-client` crate): requests and their
//! latency per endpoint and model, labels predicted, corrections learned, the journal's size and
//! the last snapshot per model.

use std::sync::atomic::Ordering;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::served::ServedModel;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    model: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    endpoint: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PredictionLabels {
    model: String,
    label: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

fn latency_histogram() -> Histogram {
    // 50 µs to about 1.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<LatencyLabels, Histogram, fn() -> Histogram>,
    predictions: Family<PredictionLabels, Counter>,
    corrections: Family<ModelLabels, Gauge>,
    journal_corrections: Family<ModelLabels, Gauge>,
    journal_bytes: Family<ModelLabels, Gauge>,
    snapshots: Family<ModelLabels, Gauge>,
    last_snapshot: Family<ModelLabels, Gauge>,
    reloads: Family<ModelLabels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("cwtext");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "HTTP requests answered, by endpoint, model and status",
            requests.clone(),
        );
        let latency = Family::<LatencyLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "request_duration_seconds",
            "Time from the request's headers to the answer, by endpoint and model",
            latency.clone(),
        );
        let predictions = Family::<PredictionLabels, Counter>::default();
        registry.register(
            "predictions",
            "Decisions of classify and filter, by model and label",
            predictions.clone(),
        );
        let gauge = |registry: &mut Registry, name: &str, help: &str| {
            let g = Family::<ModelLabels, Gauge>::default();
            registry.register(name, help, g.clone());
            g
        };
        let corrections = gauge(
            &mut registry,
            "corrections_learned",
            "Corrections acknowledged since the server started",
        );
        let journal_corrections = gauge(
            &mut registry,
            "journal_corrections",
            "Corrections in the journal, not yet in the model file",
        );
        let journal_bytes = gauge(&mut registry, "journal_bytes", "Size of the journal file");
        let snapshots = gauge(
            &mut registry,
            "snapshots",
            "Snapshots written since the server started",
        );
        let last_snapshot = gauge(
            &mut registry,
            "last_snapshot_timestamp_seconds",
            "Unix time of the last snapshot (0: none since the server started)",
        );
        let reloads = gauge(
            &mut registry,
            "reloads",
            "Model files reloaded after another program replaced them",
        );
        Metrics {
            registry,
            requests,
            latency,
            predictions,
            corrections,
            journal_corrections,
            journal_bytes,
            snapshots,
            last_snapshot,
            reloads,
        }
    }

    /// Counts one answered request.
    pub fn request(&self, endpoint: &str, model: &str, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.into(),
                model: model.into(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                endpoint: endpoint.into(),
                model: model.into(),
            })
            .observe(took.as_secs_f64());
    }

    /// Counts one decision.
    pub fn predicted(&self, model: &str, label: &str) {
        self.predictions
            .get_or_create(&PredictionLabels {
                model: model.into(),
                label: label.into(),
            })
            .inc();
    }

    /// The text exposition, the models' counters read now.
    pub fn render(&self, models: &[std::sync::Arc<ServedModel>]) -> String {
        for m in models {
            let labels = ModelLabels {
                model: m.name.clone(),
            };
            let s = &m.stats;
            let set = |family: &Family<ModelLabels, Gauge>, v: u64| {
                family.get_or_create(&labels).set(v as i64);
            };
            set(&self.corrections, s.corrections.load(Ordering::Relaxed));
            set(
                &self.journal_corrections,
                s.journal_corrections.load(Ordering::Relaxed),
            );
            set(&self.journal_bytes, s.journal_bytes.load(Ordering::Relaxed));
            set(&self.snapshots, s.snapshots.load(Ordering::Relaxed));
            set(&self.last_snapshot, s.last_snapshot.load(Ordering::Relaxed));
            set(&self.reloads, s.reloads.load(Ordering::Relaxed));
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}
