//! Where a job's results and work products live in the object store. One place, so the stages
//! that write them and the CLI that collects them cannot disagree.

use uuid::Uuid;

pub fn job_dir(batch: Uuid, job: Uuid) -> String {
    format!("batches/{batch}/{job}")
}

pub fn report(batch: Uuid, job: Uuid) -> String {
    format!("{}/report.md", job_dir(batch, job))
}

pub fn sources(batch: Uuid, job: Uuid) -> String {
    format!("{}/sources.json", job_dir(batch, job))
}

/// Every claim of the report with its citations, support and supporting passage.
pub fn claims(batch: Uuid, job: Uuid) -> String {
    format!("{}/claims.json", job_dir(batch, job))
}

/// Every source of the job with its outcome, as a markdown table for people.
pub fn sources_md(batch: Uuid, job: Uuid) -> String {
    format!("{}/sources.md", job_dir(batch, job))
}

/// `search.json` as markdown for people.
pub fn search_md(batch: Uuid, job: Uuid) -> String {
    format!("{}/search.md", job_dir(batch, job))
}

/// The job's fields, each with its typed and cited value (a job asked for fields only).
pub fn answer(batch: Uuid, job: Uuid) -> String {
    format!("{}/answer.json", job_dir(batch, job))
}

/// A work product of the job by its name under the job's folder, as listed there.
pub fn job_file(batch: Uuid, job: Uuid, name: &str) -> String {
    format!("{}/{name}", job_dir(batch, job))
}

/// What was submitted for the job: question, options, the user's id and metadata (`JobInput`).
pub fn input(batch: Uuid, job: Uuid) -> String {
    format!("{}/input.json", job_dir(batch, job))
}

/// The job's record (`job.json`), written by synthesize when the job ends.
pub fn job_record(batch: Uuid, job: Uuid) -> String {
    format!("{}/job.json", job_dir(batch, job))
}

/// The batch's summary, one JSON line per job, written when its last job ends.
pub fn summary_jsonl(batch: Uuid) -> String {
    format!("batches/{batch}/summary.jsonl")
}

/// The batch's summary as a markdown table, written with [`summary_jsonl`].
pub fn summary_md(batch: Uuid) -> String {
    format!("batches/{batch}/summary.md")
}

/// The search stage's record of every result and why it was selected or rejected.
pub fn search(batch: Uuid, job: Uuid) -> String {
    format!("{}/search.json", job_dir(batch, job))
}

/// The search stage's record of follow-up round `n` (2 and on).
pub fn search_round(batch: Uuid, job: Uuid, n: u32) -> String {
    format!("{}/search-{n}.json", job_dir(batch, job))
}

/// One analysed source, written by clean, read by synthesize.
pub fn doc(batch: Uuid, job: Uuid, idx: u32) -> String {
    format!("{}/docs/{idx}.json", job_dir(batch, job))
}

/// The jobs of a batch in submission order, written by `trawl submit`.
pub fn batch_manifest(batch: Uuid) -> String {
    format!("batches/{batch}/batch.json")
}

/// A batch's record as it stood when the batch ended (progress, job statuses, counters), read
/// once the store's copy has expired.
pub fn batch_final(batch: Uuid) -> String {
    format!("batches/{batch}/final.json")
}

/// A batch's options (webhook, budget): small, read when each job ends.
pub fn batch_options(batch: Uuid) -> String {
    format!("batches/{batch}/options.json")
}

/// Which batch a job belongs to (the batch id as text), so a job can be found by its id alone.
pub fn job_index(job: Uuid) -> String {
    format!("jobs/{job}")
}

/// A page in the fleet's page cache (its key: a hash of its URL), written by fetch.
pub fn page(key: &str) -> String {
    format!("pages/{key}.json")
}

/// The text clean extracted from the cached page `key` ([`page`]), beside it.
pub fn page_text(key: &str) -> String {
    format!("pages/{key}.text.json")
}

/// What the fleet keeps of documents root `root` (its id, `Root::id`): `manifest.json`, the
/// published version; `chunks/<file hash>.json`, each file's text in chunks; `v<N>/<file>`,
/// version N's index files (written by the search worker holding the root's lease).
pub fn documents(root: &str, rest: &str) -> String {
    format!("documents/{root}/{rest}")
}

/// The page cache key of the object [`page`] named.
pub fn page_key(object: &str) -> Option<&str> {
    object.strip_prefix("pages/")?.strip_suffix(".json")
}
