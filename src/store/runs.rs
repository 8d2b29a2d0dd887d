//! Runs: one row per `freshet run`, with what it spent.

use super::Store;

impl Store {
    /// Starts a run row; returns its id.
    pub async fn start_run(&self, started_ms: i64, policy: &str) -> sqlx::Result<i64> {
        sqlx::query_scalar("INSERT INTO runs (started_ms, policy) VALUES (?, ?) RETURNING id")
            .bind(started_ms)
            .bind(policy)
            .fetch_one(self.pool())
            .await
    }

    /// Updates a run's counters (called periodically and at the end).
    pub async fn update_run(
        &self,
        run_id: i64,
        ended_ms: Option<i64>,
        counts: [i64; 4],
    ) -> sqlx::Result<()> {
        sqlx::query(
            "UPDATE runs SET ended_ms = ?, requests = ?, checks = ?, changes = ?, errors = ?
             WHERE id = ?",
        )
        .bind(ended_ms)
        .bind(counts[0])
        .bind(counts[1])
        .bind(counts[2])
        .bind(counts[3])
        .bind(run_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
