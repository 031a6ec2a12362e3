//! `zero mces`: Monte Carlo control with exploring starts for Blackjack, compared cell by cell
//! with the exact optimal policy.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::games::blackjack::card_label;
use crate::games::blackjack::Deck;
use crate::tabular::blackjack_dp;
use crate::tabular::mces::{Difference, Mces};

use super::blackjack::{policy_cells, print_tables, PolicyCell};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of episodes.
    #[arg(long, default_value_t = 1_000_000)]
    episodes: u64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Save the learned values and policy here (postcard).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.episodes == 0 {
        bail!("--episodes must be at least 1");
    }
    let mut learner = Mces::new();
    let mut deck = Deck::new(args.seed);
    let bar = super::progress_bar(args.episodes, "episodes", !args.json);
    let started = Instant::now();
    let mut done = 0;
    while done < args.episodes {
        let chunk = (args.episodes - done).min(1 << 18);
        learner.train(chunk, &mut deck);
        done += chunk;
        bar.inc(chunk);
    }
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    if let Some(path) = &args.out {
        learner.save(path)?;
    }
    let optimal = blackjack_dp::optimal();
    let differs = learner.differences(&optimal);
    if args.json {
        #[derive(Serialize)]
        struct Out {
            episodes: u64,
            seconds: f64,
            policy: Vec<PolicyCell>,
            differs: Vec<Difference>,
        }
        return super::print_json(&Out {
            episodes: args.episodes,
            seconds,
            policy: policy_cells(&learner.policy),
            differs,
        });
    }
    print_tables(&learner.q(), &learner.policy);
    println!(
        "{} episodes in {seconds:.3} s ({:.1} ns an episode)",
        args.episodes,
        seconds * 1e9 / args.episodes as f64
    );
    println!(
        "{} of 200 cells differ from the optimal policy{}",
        differs.len(),
        if differs.is_empty() { "." } else { ":" }
    );
    for d in &differs {
        println!(
            "  sum {:>2} {:<13} dealer {:>2}: exact values differ by {:.5}",
            d.player_sum,
            if d.usable_ace {
                "usable ace"
            } else {
                "no usable ace"
            },
            card_label(d.dealer_card),
            d.gap
        );
    }
    if let Some(path) = &args.out {
        println!("saved to {}", path.display());
    }
    Ok(())
}
