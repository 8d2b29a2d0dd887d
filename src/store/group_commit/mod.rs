//! Group commit: the writes the refresher makes for every check (its observation and summary,
//! the politeness journal, the dedup rows) go to one task that runs all the writes waiting at
//! that moment in one `BEGIN IMMEDIATE` transaction, then answers each of them.
//!
//! Why: a transaction of its own per write costs a `BEGIN` and a `COMMIT` (each a round trip to
//! the connection's thread) and a fresh copy in the WAL of every page it touches; at hundreds of
//! checks a second these, not the statements, were most of the writer's time. Grouping keeps
//! every promise of [`Store::write`]: a write is answered only once its transaction committed (a
//! kill loses only writes no one was told were saved), and a write that fails (a constraint, a
//! lock held beyond the busy timeout) does not take the others with it: the group is rolled back
//! and each of its writes is run again alone, with [`Store::write`]'s retries.
//!
//! A write handed to the task owns what it writes, so it completes even if the caller stops
//! waiting for it.
//!
//! Checks ([`Store::record_check`]) are the bulk of the writes: the checks of a group are written
//! together by multi-row statements ([`super::check_writes`]). They are held back until the end
//! of the group or the next write that must see them (a write queued with
//! [`Store::write_grouped`], which may touch what a check writes, such as a URL's plan): the
//! writes queued with [`Store::queue_grouped_beside_checks`] touch nothing a check writes, so
//! whether a check is written before or after them in the same transaction does not matter.
//! The politeness journal's saves, as many as the checks, are batched the same way and written
//! last ([`super::politeness`]). So are the saves of sites' budget credits, one a check: each
//! site's last in the group is written.

use std::any::Any;
use std::collections::BTreeMap;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use super::Store;
use super::backend::Backend;
use super::check_writes::{CheckWrite, write_checks};
use super::politeness::{PolitenessWrite, write_politeness};
use super::sites::{BudgetSave, write_budget_saves};
use super::writer::{WriteTx, Writer, write_on};

/// The most writes one transaction takes (the rest wait for the next).
const MAX_GROUP: usize = 512;

type AnyValue = Box<dyn Any + Send>;
type BoxedOp =
    Box<dyn FnMut(WriteTx) -> BoxFuture<'static, sqlx::Result<(WriteTx, AnyValue)>> + Send>;

/// One write waiting for the group task.
struct Job {
    what: &'static str,
    work: Work,
    reply: oneshot::Sender<sqlx::Result<AnyValue>>,
}

/// What a write does.
enum Work {
    /// A write of its own that the checks queued before it must precede.
    Ordered(BoxedOp),
    /// A write that touches nothing a check writes.
    BesideChecks(BoxedOp),
    /// A check, written with the group's other checks.
    Check(Arc<CheckWrite>),
    /// A save of a host's politeness state, written with the group's other saves, last (it
    /// touches nothing another write does).
    Politeness(Arc<PolitenessWrite>),
    /// Saves of sites' budget credits: of each site's saves in a group only the last queued is
    /// written (each holds the credit as it stood, not a change to it), with the group's last
    /// writes (nothing else writes the credit).
    Budget(Arc<Vec<BudgetSave>>),
    /// Writes nothing: answered once every write queued before it is settled, without a
    /// transaction of its own ([`Store::settle_writes`]).
    Settled,
}

/// The sending side of the group task's queue (every clone of a [`Store`] shares it), and what
/// the task has done.
#[derive(Debug, Clone)]
pub(super) struct GroupQueue {
    jobs: mpsc::UnboundedSender<Job>,
    counts: Arc<GroupCounts>,
}

/// Transactions of more than one write committed, and the writes they held.
#[derive(Debug, Default)]
struct GroupCounts {
    groups: AtomicU64,
    writes: AtomicU64,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("what", &self.what).finish()
    }
}

impl GroupQueue {
    /// Starts the group task on the writer pool. On SQLite it runs on a thread and runtime of
    /// its own: SQLite's connections work on threads of their own and answer through channels,
    /// so the task may run anywhere, and there each statement's answer resumes it at once. On
    /// a busy runtime every statement of a group waited for the task to be polled again behind
    /// the checks and extractions queued there, and each check waited for the commit. A
    /// PostgreSQL connection's socket belongs to the runtime that opened it, so there the task
    /// stays on the current runtime. The task, and its thread, end when the last clone of the
    /// store is dropped.
    pub(super) fn start(writer: Writer, lock_retries: Arc<AtomicU64>) -> io::Result<GroupQueue> {
        let (jobs, receiver) = mpsc::unbounded_channel();
        let counts = Arc::new(GroupCounts::default());
        let backend = writer.backend;
        let task = run(writer, lock_retries, counts.clone(), receiver);
        match backend {
            Backend::Sqlite => {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                std::thread::Builder::new()
                    .name("freshet-writer".into())
                    .spawn(move || runtime.block_on(task))?;
            }
            Backend::Postgres => {
                tokio::spawn(task);
            }
        }
        Ok(GroupQueue { jobs, counts })
    }
}

impl Store {
    /// Transactions that held more than one write, and how many writes they held in all, since
    /// the store was opened (`writes / groups` is the mean group size).
    pub fn group_commits(&self) -> (u64, u64) {
        let counts = &self.group.counts;
        (
            counts.groups.load(Ordering::Relaxed),
            counts.writes.load(Ordering::Relaxed),
        )
    }

    /// Runs `op` like [`Store::write`], but in a transaction shared with the other writes
    /// waiting at the same moment, after every check queued before it; answers once that
    /// transaction committed.
    pub(super) async fn write_grouped<T, F, Fut>(
        &self,
        what: &'static str,
        op: F,
    ) -> sqlx::Result<T>
    where
        T: Send + 'static,
        F: FnMut(WriteTx) -> Fut + Send + 'static,
        Fut: Future<Output = sqlx::Result<(WriteTx, T)>> + Send + 'static,
    {
        self.queue_op(what, op, Work::Ordered).await
    }

    /// [`Store::write_grouped`] for a write that touches nothing a check writes (observations,
    /// a URL's summary and plan columns, a host's validator trust), queued at once (before the
    /// returned future is first polled): writes queued in some order are committed in that
    /// order, so a caller may queue under a lock and wait for the commit after releasing it.
    pub(super) fn queue_grouped_beside_checks<T, F, Fut>(
        &self,
        what: &'static str,
        op: F,
    ) -> impl Future<Output = sqlx::Result<T>> + Send + 'static + use<T, F, Fut>
    where
        T: Send + 'static,
        F: FnMut(WriteTx) -> Fut + Send + 'static,
        Fut: Future<Output = sqlx::Result<(WriteTx, T)>> + Send + 'static,
    {
        self.queue_op(what, op, Work::BesideChecks)
    }

    /// Queues a check, written with the other checks of its group.
    pub(super) fn queue_check(
        &self,
        check: Arc<CheckWrite>,
    ) -> impl Future<Output = sqlx::Result<()>> + Send + 'static + use<> {
        let answer = self.queue("record_check", Work::Check(check));
        async move {
            answer.await?;
            Ok(())
        }
    }

    /// Queues a save of a host's politeness state, written with the other saves of its group.
    pub(super) fn queue_politeness(
        &self,
        write: Arc<PolitenessWrite>,
    ) -> impl Future<Output = sqlx::Result<()>> + Send + 'static + use<> {
        let answer = self.queue("save_politeness", Work::Politeness(write));
        async move {
            answer.await?;
            Ok(())
        }
    }

    /// Queues saves of sites' budget credits, written with the other saves of their group.
    pub(super) fn queue_budget_saves(
        &self,
        saves: Vec<BudgetSave>,
    ) -> impl Future<Output = sqlx::Result<()>> + Send + 'static + use<> {
        let answer = self.queue("save_site_budgets", Work::Budget(Arc::new(saves)));
        async move {
            answer.await?;
            Ok(())
        }
    }

    /// Waits until every write queued before now is settled (committed, or failed and
    /// answered). Writes nothing: it takes no lock, so a store that only read (a report)
    /// closes at once while another process holds the write lock. (It queued an empty
    /// write, whose `BEGIN IMMEDIATE` waited for that lock: `report age` beside a long write
    /// transaction printed nothing for minutes, retrying its "write".)
    pub(super) async fn settle_writes(&self) {
        let _ = self.queue("settle", Work::Settled).await;
    }

    /// Queues `op` as `kind` of work.
    fn queue_op<T, F, Fut>(
        &self,
        what: &'static str,
        mut op: F,
        kind: fn(BoxedOp) -> Work,
    ) -> impl Future<Output = sqlx::Result<T>> + Send + 'static + use<T, F, Fut>
    where
        T: Send + 'static,
        F: FnMut(WriteTx) -> Fut + Send + 'static,
        Fut: Future<Output = sqlx::Result<(WriteTx, T)>> + Send + 'static,
    {
        // A write that panics fails alone (its transaction rolls back as it unwinds) instead of
        // ending the task that every later write goes through.
        let boxed: BoxedOp = Box::new(move |tx| {
            let fut = AssertUnwindSafe(op(tx)).catch_unwind();
            Box::pin(async move {
                let (tx, value) = fut
                    .await
                    .map_err(|_| sqlx::Error::Protocol(format!("the write {what} panicked")))??;
                Ok((tx, Box::new(value) as AnyValue))
            })
        });
        let answer = self.queue(what, kind(boxed));
        async move {
            Ok(*answer
                .await?
                .downcast::<T>()
                .expect("a grouped write answers with its own type"))
        }
    }

    /// Hands `work` to the group task at once; the future answers once it committed.
    fn queue(
        &self,
        what: &'static str,
        work: Work,
    ) -> impl Future<Output = sqlx::Result<AnyValue>> + Send + 'static + use<> {
        let (reply, answer) = oneshot::channel();
        let job = Job { what, work, reply };
        let queued = self.group.jobs.send(job);
        let (writer, lock_retries) = (self.writer.clone(), self.lock_retries.clone());
        async move {
            match queued {
                Ok(()) => answer.await.map_err(|_| sqlx::Error::PoolClosed)?,
                // The task is gone (its runtime ended): the write runs here, alone.
                Err(mpsc::error::SendError(mut job)) => {
                    run_alone(&writer, &lock_retries, &mut job).await
                }
            }
        }
    }
}

/// The group task: takes every write waiting, runs them in one transaction, answers them.
async fn run(
    writer: Writer,
    lock_retries: Arc<AtomicU64>,
    counts: Arc<GroupCounts>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    let mut group: Vec<Job> = Vec::new();
    while let Some(first) = jobs.recv().await {
        group.push(first);
        while group.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        // Waits for the writes before them: answered once the rest of the group is.
        let (settled, writes): (Vec<Job>, Vec<Job>) = std::mem::take(&mut group)
            .into_iter()
            .partition(|job| matches!(job.work, Work::Settled));
        group = writes;
        run_group(&writer, &lock_retries, &counts, &mut group).await;
        for job in settled {
            let _ = job.reply.send(Ok(Box::new(()) as AnyValue));
        }
    }
}

/// Runs `group` in one transaction, or each write alone when it holds one or the transaction
/// failed, and answers every write.
async fn run_group(
    writer: &Writer,
    lock_retries: &AtomicU64,
    counts: &GroupCounts,
    group: &mut Vec<Job>,
) {
    if group.len() > 1
        && let Ok(values) = run_together(writer, group).await
    {
        counts.groups.fetch_add(1, Ordering::Relaxed);
        counts
            .writes
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        for (job, value) in group.drain(..).zip(values) {
            let _ = job.reply.send(Ok(value));
        }
        return;
    }
    // Alone, or the group failed (rolled back): each write on its own, with retries.
    for mut job in group.drain(..) {
        let result = run_alone(writer, lock_retries, &mut job).await;
        let _ = job.reply.send(result);
    }
}

/// Runs one write in a transaction of its own, with [`write_on`]'s retries.
async fn run_alone(
    writer: &Writer,
    lock_retries: &AtomicU64,
    job: &mut Job,
) -> sqlx::Result<AnyValue> {
    match &mut job.work {
        Work::Ordered(op) | Work::BesideChecks(op) => {
            write_on(writer, lock_retries, job.what, op).await
        }
        Work::Settled => Ok(Box::new(()) as AnyValue),
        Work::Check(check) => {
            let checks = [check.clone()];
            write_on(writer, lock_retries, job.what, |tx| async {
                Ok((write_checks(tx, &checks).await?, Box::new(()) as AnyValue))
            })
            .await
        }
        Work::Politeness(save) => {
            let saves = [save.clone()];
            write_on(writer, lock_retries, job.what, |tx| async {
                Ok((
                    write_politeness(tx, &saves).await?,
                    Box::new(()) as AnyValue,
                ))
            })
            .await
        }
        Work::Budget(saves) => {
            let saves = saves.clone();
            write_on(writer, lock_retries, job.what, |tx| async {
                Ok((
                    write_budget_saves(tx, saves.iter()).await?,
                    Box::new(()) as AnyValue,
                ))
            })
            .await
        }
    }
}

/// Runs every write of `group` in one transaction; any error rolls them all back. Checks wait
/// for the next ordered write or the end of the group, and are written together.
async fn run_together(writer: &Writer, group: &mut [Job]) -> sqlx::Result<Vec<AnyValue>> {
    let mut tx = writer.pool.begin_with(writer.backend.begin_write()).await?;
    let mut values = Vec::with_capacity(group.len());
    let (mut checks, mut saves) = (Vec::new(), Vec::new());
    // Each site's last credit queued, by site id.
    let mut credits: BTreeMap<i64, BudgetSave> = BTreeMap::new();
    for job in group.iter_mut() {
        let op = match &mut job.work {
            Work::Check(check) => {
                checks.push(check.clone());
                values.push(Box::new(()) as AnyValue);
                continue;
            }
            Work::Politeness(save) => {
                saves.push(save.clone());
                values.push(Box::new(()) as AnyValue);
                continue;
            }
            Work::Budget(budget) => {
                credits.extend(budget.iter().map(|save| (save.site_id, *save)));
                values.push(Box::new(()) as AnyValue);
                continue;
            }
            Work::Settled => {
                values.push(Box::new(()) as AnyValue);
                continue;
            }
            Work::Ordered(op) => {
                tx = write_checks(tx, &checks).await?;
                checks.clear();
                op
            }
            Work::BesideChecks(op) => op,
        };
        let (next, value) = op(tx).await?;
        tx = next;
        values.push(value);
    }
    tx = write_checks(tx, &checks).await?;
    tx = write_politeness(tx, &saves).await?;
    tx = write_budget_saves(tx, credits.values()).await?;
    tx.commit().await?;
    Ok(values)
}

#[cfg(test)]
mod tests;
