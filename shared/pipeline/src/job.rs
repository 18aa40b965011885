//! A job as a stage sees it while handling one of its messages: the one way stages read the
//! job's meta, grow it, record outcomes, hand work on, decide retry-or-end, and call the LLM
//! under the batch's budget with spend charged once. Every synthesis trigger starts here: the
//! deadline armed at submission, a job opened without sources, the last outcome recorded, a
//! follow-up round that found nothing new.
//!
//! The store protocol behind it is [`crate::fanin`] (see `fanin.md`); stages never touch the
//! fan-in records or the broker settings themselves. Follow-up research rounds are methods
//! here too ([`Job::follow_up`], [`Job::extend_round`], [`Job::rounds`]), so they keep to the
//! same rules.

use trawl_broker::Queue;
use trawl_llm::Llm;
use trawl_messages::envelope::Body;
use trawl_messages::{Envelope, JobOptions, Round, SearchTask, Source};

use crate::fanin::{self, JobMeta, OutcomeRecord};
use crate::results::Counter;
use crate::runtime::{BUDGET, REFUSED, SPENT};
use crate::{Runtime, StageError};

/// One job, seen through one of its messages (`env`).
pub struct Job<'a, B> {
    rt: &'a Runtime,
    env: &'a Envelope<B>,
}

/// The LLM a job's step may use.
pub enum JobLlm {
    /// Bound to the batch: each call reserves from its budget and settles after.
    Ready(Llm),
    /// Configured, but the batch's budget is reached.
    BudgetSpent,
    /// No `[llm]`.
    NotConfigured,
}

impl JobLlm {
    /// `llm` outside any batch (`trawl mcp`'s tools): no budget, answers cached in `store`.
    pub fn unbudgeted(llm: Option<&Llm>, store: std::sync::Arc<dyn trawl_store::Store>) -> Self {
        match llm {
            Some(llm) => JobLlm::Ready(llm.with_store(store)),
            None => JobLlm::NotConfigured,
        }
    }

    pub fn ready(&self) -> Option<&Llm> {
        match self {
            JobLlm::Ready(llm) => Some(llm),
            _ => None,
        }
    }
}

impl<'a, B: Body> Job<'a, B> {
    pub fn new(rt: &'a Runtime, env: &'a Envelope<B>) -> Self {
        Job { rt, env }
    }

    pub fn rt(&self) -> &'a Runtime {
        self.rt
    }

    pub fn envelope(&self) -> &'a Envelope<B> {
        self.env
    }

    pub fn id(&self) -> String {
        self.env.job_id.to_string()
    }

    pub fn batch(&self) -> String {
        self.env.batch_id.to_string()
    }

    /// True when this message's failure would be its last: a stage that would retry ends the
    /// work instead (with what it has), so the job still completes.
    pub fn last_attempt(&self) -> bool {
        self.env.attempt + 1 >= self.rt.config.broker.max_attempts
    }

    /// Sends `body` for this job to `queue` (a fresh message: attempt 0, the job's deadline).
    pub async fn send<C: Body>(&self, queue: Queue, body: C) -> Result<(), StageError> {
        self.rt.publish(queue, &self.env.follow(body)).await
    }

    /// What search decided for the job (its crawled sources are in [`fanin::job_state`]);
    /// `None` once the record is gone (the job ended and expired). A store outage is retried,
    /// a corrupt record is permanent: the one policy every stage reads the meta with.
    pub async fn meta(&self) -> Result<Option<JobMeta>, StageError> {
        fanin::meta(self.rt, &self.id()).await
    }

    /// Arms the job's deadline (at submission): synthesis with whatever has arrived by then,
    /// so a job whose search never completes still ends.
    pub(crate) async fn arm_deadline(&self, query: &str) -> Result<(), StageError> {
        fanin::arm_deadline(self.rt, self.env, query).await
    }

    /// Opens the job with `meta` (search): returns the sources the job is bound to, those of
    /// the first attempt on a redelivery. A job without sources goes to synthesis at once.
    pub async fn open(&self, meta: JobMeta) -> Result<Vec<Source>, StageError> {
        fanin::open_job(self.rt, self.env, meta).await
    }

    /// Grows the job by sources crawled from source `parent` (at most `cap` per job); returns
    /// those granted, numbered. Call before `parent`'s own outcome is recorded.
    pub async fn extend(
        &self,
        parent: u32,
        found: &[Source],
        cap: u32,
    ) -> Result<Vec<Source>, StageError> {
        fanin::extend_job(self.rt, self.env, parent, found, cap).await
    }

    /// Every source of the job: search's, crawled ones and follow-up rounds'.
    pub async fn sources(&self) -> Result<Vec<Source>, StageError> {
        let meta = fanin::grown_meta(self.rt, &self.id()).await?;
        Ok(meta.map(|m| m.sources).unwrap_or_default())
    }

    /// The rounds of research the job has had so far: its first search, and each follow-up
    /// round search has run.
    pub async fn rounds(&self) -> Result<u32, StageError> {
        fanin::rounds(self.rt, &self.id()).await
    }

    /// Starts follow-up round `round` of the job (synthesize, once a round's outcomes are in
    /// and something is still lacking): a search task of the job that carries the round.
    /// Starting one twice is harmless, since search grows the job once per round.
    pub async fn follow_up(
        &self,
        query: String,
        options: JobOptions,
        round: Round,
    ) -> Result<(), StageError> {
        let task = SearchTask {
            round: Some(round),
            ..SearchTask::new(query, options)
        };
        self.send(Queue::Search, task).await
    }

    /// Grows the job by the sources follow-up round `n` found (search), once per round: a
    /// redelivered round gets the first call's back, numbered. When the round adds nothing,
    /// the job goes to synthesis.
    pub async fn extend_round(
        &self,
        query: &str,
        n: u32,
        found: &[Source],
    ) -> Result<Vec<Source>, StageError> {
        fanin::extend_round(self.rt, self.env, query, n, found).await
    }

    /// Records one source's terminal outcome, exactly once; the job goes to synthesis when it
    /// was the last one in.
    pub async fn record(&self, query: &str, record: OutcomeRecord) -> Result<(), StageError> {
        fanin::record_outcome(self.rt, self.env, query, record).await
    }

    /// The LLM for this job's steps: `llm` bound to the batch's budget, unless the budget is
    /// reached or there is no LLM.
    pub async fn llm(&self, llm: Option<&Llm>) -> Result<JobLlm, StageError> {
        let Some(llm) = llm else {
            return Ok(JobLlm::NotConfigured);
        };
        let batch = self.batch();
        Ok(match self.budget_left(&batch).await? {
            true => JobLlm::Ready(llm.for_batch(self.rt.store.clone(), &batch)),
            false => JobLlm::BudgetSpent,
        })
    }

    /// False once the batch's LLM budget is reached: spent, or unable to give a call the room
    /// the call might cost (a batch without a budget never runs out). From then on its jobs
    /// take the non-LLM paths, without asking the store call by call.
    async fn budget_left(&self, batch: &str) -> Result<bool, StageError> {
        let store = &self.rt.store;
        let budget = store.batch_counter(batch, BUDGET).await?;
        if budget <= 0 {
            return Ok(true);
        }
        Ok(store.batch_counter(batch, REFUSED).await? == 0
            && store.batch_counter(batch, SPENT).await? < budget)
    }

    /// Charges the job with what `stage` spent through `llm` (a handle from [`Job::llm`]), and
    /// the steps that fell back, for `job.json` and summaries. The batch was charged call by
    /// call, as each settled its budget reservation, so spend is counted once.
    pub async fn charge(&self, stage: &str, llm: &Llm) -> Result<(), StageError> {
        let spend = llm.spent();
        let mut fields: Vec<(String, i64)> = (spend.fallbacks.iter())
            .map(|(step, &n)| (Counter::Fallback.key(step), n as i64))
            .collect();
        if spend.input_tokens + spend.output_tokens > 0 {
            fields.extend([
                (Counter::TokensIn.key(stage), spend.input_tokens as i64),
                (Counter::TokensOut.key(stage), spend.output_tokens as i64),
                (
                    Counter::CostMicro.key(stage),
                    spend.cost_microdollars as i64,
                ),
                (
                    Counter::Estimated.key(stage),
                    spend.estimated_requests as i64,
                ),
            ]);
        }
        if fields.is_empty() {
            return Ok(());
        }
        let ttl = self.rt.job_ttl();
        Ok(self.rt.store.job_add(&self.id(), &fields, ttl).await?)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use trawl_messages::{SourceKind, SynthesizeTask, Trigger};

    use super::*;

    fn source(url: &str) -> Source {
        Source {
            idx: 0,
            url: url.into(),
            title: String::new(),
            snippet: String::new(),
            provider: "searxng".into(),
            position: 1,
            score: 0.5,
            kind: SourceKind::Page,
            file_type: None,
        }
    }

    /// A synthesis request waiting for the job, if any.
    async fn trigger(rt: &Runtime) -> Option<Trigger> {
        let mut consumer = rt.broker.consume(Queue::Synthesize, 1).await.unwrap();
        let delivery = tokio::time::timeout(Duration::from_millis(200), consumer.next())
            .await
            .ok()??;
        let env = Envelope::<SynthesizeTask>::decode(&delivery.message.body).unwrap();
        delivery.ack().await.unwrap();
        Some(env.body.trigger)
    }

    #[tokio::test]
    async fn a_follow_up_round_grows_the_job_once_and_an_empty_one_ends_it() {
        let mut config = trawl_config::Config::default();
        config.output.url = "memory://".into();
        let rt = Runtime::embedded(config).unwrap();
        let task = SearchTask::new("q".into(), JobOptions::default());
        let env = Envelope::new(
            uuid::Uuid::now_v7(),
            uuid::Uuid::now_v7(),
            chrono::Utc::now() + chrono::Duration::minutes(5),
            task,
        );
        let job = Job::new(&rt, &env);
        let meta = JobMeta {
            query: "q".into(),
            sources: vec![source("http://a.test/")],
            ..Default::default()
        };
        job.open(meta).await.unwrap();
        assert_eq!(job.rounds().await.unwrap(), 1);

        let found = [source("http://b.test/"), source("http://c.test/")];
        let granted = job.extend_round("q", 2, &found).await.unwrap();
        assert_eq!(granted.iter().map(|s| s.idx).collect::<Vec<_>>(), [1, 2]);
        // A redelivered round gets its first call's sources back; the job grows once.
        let again = job.extend_round("q", 2, &[source("http://d.test/")]).await;
        assert_eq!(again.unwrap(), granted);
        assert_eq!(job.rounds().await.unwrap(), 2);
        assert_eq!(job.sources().await.unwrap().len(), 3);
        assert_eq!(trigger(&rt).await, None, "outcomes are still to come");

        // A round that finds nothing new sends the job to synthesis, as no outcome will.
        assert!(job.extend_round("q", 3, &[]).await.unwrap().is_empty());
        assert_eq!(job.rounds().await.unwrap(), 3);
        assert_eq!(trigger(&rt).await, Some(Trigger::Complete));
    }
}
