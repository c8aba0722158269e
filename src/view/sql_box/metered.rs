//! Every batch an operator of a SQL box query passes up, counted in the query's memory pool
//! ([`super::memory`]): DataFusion accounts what its operators hold (a sort's buffer, an
//! aggregate's groups), not what they make and pass on (a projection's strings, a join's
//! output), so a query that makes its values large — a literal or `repeat` broadcast over many
//! rows, a CTE that doubles a text at each step — grew without bound. [`MeteredExec`] wraps each
//! operator: the batch it last passed up is held as a reservation of its own, and a batch past
//! what the pool still allows stops the query there, in the pool's words.

use std::fmt::Formatter;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::MemoryConsumer;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt;

/// An operator whose output batches are counted in the query's memory pool.
#[derive(Debug, Clone)]
pub struct MeteredExec {
    input: Arc<dyn ExecutionPlan>,
}

impl MeteredExec {
    /// `input`, its batches counted.
    pub fn new(input: Arc<dyn ExecutionPlan>) -> MeteredExec {
        MeteredExec { input }
    }

    /// The name this wrapper shows in a plan.
    pub fn static_name() -> &'static str {
        "MeteredExec"
    }
}

impl DisplayAs for MeteredExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut Formatter<'_>) -> std::fmt::Result {
        write!(f, "MeteredExec")
    }
}

impl ExecutionPlan for MeteredExec {
    fn name(&self) -> &str {
        Self::static_name()
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(MeteredExec::new(children.swap_remove(0))))
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let reservation =
            MemoryConsumer::new(format!("{}'s output", self.input.name())).register(context.memory_pool());
        let stream = self.input.execute(partition, context)?;
        let schema = stream.schema();
        let counted = stream.map(move |batch| {
            let batch = batch?;
            reservation.try_resize(batch.get_array_memory_size())?;
            Ok(batch)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, counted)))
    }
}
