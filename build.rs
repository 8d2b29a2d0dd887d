//! Rebuild when a migration is added, so `sqlx::migrate!` picks it up.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
