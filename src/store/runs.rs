//! Runs: one row per `freshet run`, with what it spent.

use super::Store;

impl Store {
    /// Starts a run row; returns its id.
    pub async fn start_run(
        &self,
        started_ms: i64,
        policy: &str,
        clock_speed: f64,
    ) -> sqlx::Result<i64> {
        self.write("start_run", |mut tx| async move {
            let value = sqlx::query_scalar(
                "INSERT INTO runs (started_ms, policy, clock_speed) VALUES ($1, $2, $3) RETURNING id",
            )
            .bind(started_ms)
            .bind(policy)
            .bind(clock_speed)
            .fetch_one(&mut *tx)
            .await?;
            Ok((tx, value))
        })
        .await
    }

    /// "Now" for reports: `wall_now_ms`, unless the latest run was on a virtual clock (a demo),
    /// whose time is then where its run ended.
    pub async fn report_now(&self, wall_now_ms: i64) -> sqlx::Result<i64> {
        let last: Option<(f64, Option<i64>)> =
            sqlx::query_as("SELECT clock_speed, ended_ms FROM runs ORDER BY id DESC LIMIT 1")
                .fetch_optional(self.reader())
                .await?;
        Ok(match last {
            Some((speed, Some(ended))) if speed != 1.0 => ended,
            _ => wall_now_ms,
        })
    }

    /// Updates a run's counters (called periodically and at the end).
    pub async fn update_run(
        &self,
        run_id: i64,
        ended_ms: Option<i64>,
        counts: [i64; 4],
    ) -> sqlx::Result<()> {
        self.write("update_run", |mut tx| async move {
            sqlx::query(
                "UPDATE runs SET ended_ms = $1, requests = $2, checks = $3, changes = $4, errors = $5
                 WHERE id = $6",
            )
            .bind(ended_ms)
            .bind(counts[0])
            .bind(counts[1])
            .bind(counts[2])
            .bind(counts[3])
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
            Ok((tx, ()))
        })
        .await
    }
}

#[cfg(test)]
mod tests {

    #[tokio::test]
    async fn reports_read_now_from_the_end_of_a_virtual_run() {
        let (stores, _dir) =
            crate::store::test_support::stores("reports_read_now_from_the_end_of_a_virtual_run")
                .await;
        for store in stores {
            assert_eq!(store.report_now(5_000).await.unwrap(), 5_000);
            let demo = store.start_run(100, "learned", 3600.0).await.unwrap();
            store.update_run(demo, Some(900), [0; 4]).await.unwrap();
            assert_eq!(store.report_now(5_000).await.unwrap(), 900);
            let real = store.start_run(4_000, "learned", 1.0).await.unwrap();
            store.update_run(real, Some(4_500), [0; 4]).await.unwrap();
            assert_eq!(store.report_now(5_000).await.unwrap(), 5_000);
        }
    }
}
