//! `zero blackjack optimal` (exact optimal values and policy by dynamic programming) and
//! `zero blackjack eval` (a policy's mean return by simulation next to its exact value).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::games::blackjack::{card_label, play_hand, Action, Deck, State, STATES};
use crate::tabular::blackjack_dp;
use crate::tabular::mces::Mces;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// The exact optimal action values, policy and expected return (dynamic programming).
    Optimal {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// A policy's mean return over simulated hands, with a 95% interval and its exact value.
    Eval {
        /// `optimal` or `mces:PATH` (a file saved by `zero mces --out`).
        #[arg(long, default_value = "optimal")]
        policy: PolicySource,
        #[arg(long, default_value_t = 1_000_000)]
        episodes: u64,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Debug)]
enum PolicySource {
    Optimal,
    Mces(PathBuf),
}

impl FromStr for PolicySource {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.split_once(':') {
            None if s == "optimal" => Ok(PolicySource::Optimal),
            Some(("mces", p)) if !p.is_empty() => Ok(PolicySource::Mces(PathBuf::from(p))),
            _ => bail!("unknown policy '{s}': use 'optimal' or 'mces:PATH'"),
        }
    }
}

impl std::fmt::Display for PolicySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicySource::Optimal => write!(f, "optimal"),
            PolicySource::Mces(p) => write!(f, "mces:{}", p.display()),
        }
    }
}

/// One state's action in the JSON output (dealer card 1 is the ace).
#[derive(Serialize)]
pub struct PolicyCell {
    pub player_sum: u8,
    pub usable_ace: bool,
    pub dealer_card: u8,
    pub action: &'static str,
}

pub fn policy_cells(policy: &[Action; STATES]) -> Vec<PolicyCell> {
    State::all()
        .map(|s| PolicyCell {
            player_sum: s.player_sum,
            usable_ace: s.usable_ace,
            dealer_card: s.dealer_card,
            action: policy[s.index()].name(),
        })
        .collect()
}

/// A grid in the book's layout: rows the dealer's card 2..10 then the ace (as 11), columns
/// the player's sum 12..21.
pub fn grid(title: &str, usable_ace: bool, cell: impl Fn(State) -> String) -> String {
    let mut out = format!(
        "{title} ({} usable ace)\n",
        if usable_ace { "" } else { "no" }
    )
    .replace("( usable", "(usable");
    out.push_str(&format!("{:>7}", "dealer"));
    for sum in 12..=21 {
        out.push_str(&format!("{sum:>7}"));
    }
    out.push('\n');
    for card in (2..=10u8).chain([1]) {
        out.push_str(&format!("{:>7}", card_label(card)));
        for sum in 12..=21u8 {
            let s = State {
                player_sum: sum,
                usable_ace,
                dealer_card: card,
            };
            out.push_str(&format!("{:>7}", cell(s)));
        }
        out.push('\n');
    }
    out
}

/// The action-value grids (stick, hit) and the policy grids for both kinds of hand.
pub fn print_tables(q: &[[f64; 2]; STATES], policy: &[Action; STATES]) {
    for usable in [true, false] {
        for (a, name) in [(0, "Q(stick)"), (1, "Q(hit)")] {
            println!(
                "{}",
                grid(name, usable, |s| format!("{:+.3}", q[s.index()][a]))
            );
        }
    }
    for usable in [true, false] {
        println!(
            "{}",
            grid("policy, H hit / S stick", usable, |s| {
                match policy[s.index()] {
                    Action::Hit => "H".into(),
                    Action::Stick => "S".into(),
                }
            })
        );
    }
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Sub::Optimal { json } => optimal(json),
        Sub::Eval {
            policy,
            episodes,
            seed,
            json,
        } => eval(&policy, episodes, seed, json),
    }
}

fn optimal(json: bool) -> Result<()> {
    let v = blackjack_dp::optimal();
    if json {
        #[derive(Serialize)]
        struct Out {
            #[serde(rename = "return")]
            deal_return: f64,
            return_without_naturals: f64,
            policy: Vec<PolicyCell>,
            q: Vec<QCell>,
        }
        #[derive(Serialize)]
        struct QCell {
            player_sum: u8,
            usable_ace: bool,
            dealer_card: u8,
            stick: f64,
            hit: f64,
        }
        let q = State::all()
            .map(|s| QCell {
                player_sum: s.player_sum,
                usable_ace: s.usable_ace,
                dealer_card: s.dealer_card,
                stick: v.q[s.index()][0],
                hit: v.q[s.index()][1],
            })
            .collect();
        return super::print_json(&Out {
            deal_return: v.deal_return,
            return_without_naturals: v.deal_return_without_naturals,
            policy: policy_cells(&v.policy),
            q,
        });
    }
    print_tables(&v.q, &v.policy);
    println!(
        "exact expected return of the optimal policy from a fresh deal: {:+.6}",
        v.deal_return
    );
    println!(
        "(were a natural an ordinary 21, without its payout: {:+.6})",
        v.deal_return_without_naturals
    );
    Ok(())
}

fn eval(source: &PolicySource, episodes: u64, seed: u64, json: bool) -> Result<()> {
    if episodes < 2 {
        bail!("--episodes must be at least 2");
    }
    let policy = match source {
        PolicySource::Optimal => blackjack_dp::optimal().policy,
        PolicySource::Mces(path) => Mces::load(path)?.policy,
    };
    let exact = blackjack_dp::evaluate(&policy).deal_return;
    let optimal_return = blackjack_dp::optimal().deal_return;
    let started = Instant::now();
    let mut deck = Deck::new(seed);
    let bar = super::progress_bar(episodes, "hands", !json);
    let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
    let mut done = 0;
    while done < episodes {
        let chunk = (episodes - done).min(1 << 16);
        for _ in 0..chunk {
            let r = play_hand(&policy, &mut deck);
            sum += r;
            sum_sq += r * r;
        }
        done += chunk;
        bar.inc(chunk);
    }
    bar.finish_and_clear();
    let n = episodes as f64;
    let mean = sum / n;
    let var = (sum_sq - n * mean * mean) / (n - 1.0);
    let half = 1.96 * (var / n).sqrt();
    let seconds = started.elapsed().as_secs_f64();
    if json {
        #[derive(Serialize)]
        struct Out {
            policy: String,
            episodes: u64,
            seconds: f64,
            mean: f64,
            ci95: [f64; 2],
            exact: f64,
            optimal_exact: f64,
        }
        return super::print_json(&Out {
            policy: source.to_string(),
            episodes,
            seconds,
            mean,
            ci95: [mean - half, mean + half],
            exact,
            optimal_exact: optimal_return,
        });
    }
    println!(
        "policy {source}: mean return over {episodes} hands {mean:+.5} ± {half:.5} (95%), {seconds:.2} s"
    );
    println!("exact expected return of this policy (DP):    {exact:+.6}");
    println!("exact expected return of the optimal policy:  {optimal_return:+.6}");
    Ok(())
}
