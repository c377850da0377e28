//! `sluice image build`: pre-initialize and compile the base image ahead of the first start.

use super::{RUN_MAX_CONTAINERS, usage_error};
use crate::sandbox::{Sandbox, SandboxConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ImageCommand {
    /// Build the base image into the cache now (at install time, in a container image's build),
    /// so the service's first start maps it instead of spending seconds making it. Prints
    /// where it is; does nothing but report when it is already there.
    Build {
        /// Where the compiled base image is cached.
        #[arg(long, env = "SLUICE_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
}

pub(crate) async fn image_command(command: ImageCommand) -> ExitCode {
    let ImageCommand::Build { cache_dir } = command;
    // The image does not depend on how many containers a process may hold: `serve` and `run`
    // map the same file.
    let mut config =
        SandboxConfig { max_containers: RUN_MAX_CONTAINERS, ready_containers: 0, ..SandboxConfig::default() };
    if let Some(dir) = cache_dir {
        config.cache_dir = dir;
    }
    let started = Instant::now();
    let sandbox = match Sandbox::new(config).await {
        Ok(sandbox) => sandbox,
        Err(e) => return usage_error(&e.to_string()),
    };
    let (origin, guest_sha256) = Sandbox::guest_origin();
    println!("image   {}", sandbox.image_file().display());
    println!("guest   {guest_sha256} ({origin})");
    println!("ready in {:.1} s", started.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}
