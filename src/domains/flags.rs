//! The detector after the fact in a domain that brings no flag stage of its own: every recorded
//! artifact observed again without any reference (answer-free, no model call) and the domain's
//! channels rerun on it (`flags`: step, question_id, channels, flagged).

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};

use super::{DomainKind, FlagConfig};
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::{Channels, check_channels};

/// One `flags` row.
pub struct ChannelRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Every channel on the episode.
    pub channels: Channels,
    /// Any of the stage's channels fired.
    pub flagged: bool,
}

/// The `flags` table of a domain other than text-to-SQL.
pub fn table() -> Table<ChannelRow> {
    type V = Getter<ChannelRow>;
    Table {
        name: "flags",
        description: "The domain's answer-free channels rerun over recorded episodes after the fact.",
        written_by: "the flag stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new(
                "channels",
                V::Nested {
                    ty: crate::seam::tables::channels_type,
                    nullable: false,
                    build: |rows| {
                        crate::seam::tables::channel_lists(&rows.iter().map(|r| &r.channels).collect::<Vec<_>>())
                    },
                },
                "Every channel of the domain, as episodes.channels holds them.",
            ),
            Column::new("flagged", V::Bool(|r| r.flagged), "Any of the stage's channels fired."),
        ],
    }
}

/// The `flags` of the `episodes` input: each artifact observed again and its channels rerun.
pub fn generic<D: DomainKind>(
    config: &FlagConfig<D::Options>,
    ctx: &StageContext,
    inputs: &Inputs,
) -> Result<RecordBatch> {
    D::check(&config.options).map_err(|e| Error::stage(&ctx.stage_id, e))?;
    let domain = D::configure(config.options.clone(), ctx)?;
    let flag_by = config.channels.clone().unwrap_or_else(|| crate::seam::Domain::flag_channels(&domain));
    check_channels::<D>(&flag_by, "channels").map_err(|e| Error::stage(&ctx.stage_id, e))?;
    let tasks = domain.tasks(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
    let task_of: HashMap<i64, &D::Task> = tasks.iter().map(|t| (D::id(t), t)).collect();
    let (e, path) = (inputs.get(ctx, "episodes")?, Path::new("episodes"));
    let step = crate::table::column::<UInt64Array>(e, path, "step")?;
    let qid = crate::table::column::<Int64Array>(e, path, "question_id")?;
    let artifact = crate::table::column::<StringArray>(e, path, D::ARTIFACT)?;
    let mut worker = domain.worker();
    let mut rows = Vec::with_capacity(e.num_rows());
    for i in 0..e.num_rows() {
        let q = qid.value(i);
        let task =
            task_of.get(&q).ok_or_else(|| Error::input(path, format!("row {i}: question_id {q} is not a task")))?;
        let a = artifact.is_valid(i).then(|| artifact.value(i));
        let obs = match a {
            Some(a) => domain.observe(&mut worker, task, a)?.obs,
            None => domain.unobserved("nothing was produced"),
        };
        let channels = domain.channels(task, a, &obs);
        let flagged = channels.0.iter().any(|c| c.fired && flag_by.iter().any(|n| n == c.name));
        rows.push(ChannelRow { step: step.value(i), question_id: q, channels, flagged });
    }
    table().batch(&rows)
}
