//! The grading of `best` on the game's evaluation set, the network alone and with search.

use std::path::Path;

use anyhow::Result;

use crate::agent::Agent;
use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_player::stage_net;
use crate::alphazero::player::policy_player::policy_agent;
use crate::arena::grading::{grade, GradeResult, GRADING};
use crate::catalog::Catalogued;
use crate::core::threads::default_threads;

/// Best's grades on the evaluation set.
pub(super) struct Grades {
    pub(super) net: Option<GradeResult>,
    pub(super) search: Option<GradeResult>,
    pub(super) seconds: Option<f64>,
}

/// Grades `best` on the game's evaluation set (or on the subsets `cfg.grade` names): the
/// network alone, playing its most likely move, and with `eval_sims` simulations of search,
/// with no random plies. The set's exact values only grade; none reaches training.
pub(super) fn grade_best<G: Catalogued>(
    cfg: &RunConfig,
    best: &Path,
    iteration: u32,
    progress: bool,
) -> Result<Grades> {
    let (net_n, search_n) = (
        cfg.eval.grade.net_positions,
        cfg.eval.grade.search_positions,
    );
    if net_n == 0 && search_n == 0 {
        return Ok(Grades {
            net: None,
            search: None,
            seconds: None,
        });
    }
    let started = std::time::Instant::now();
    let set = G::eval_set()?;
    let seed = GRADING.seed(cfg.seed, iteration as u64);
    let threads = default_threads();
    let net = if net_n > 0 {
        let precision = cfg.net.precision;
        let alone = || Ok(Box::new(policy_agent::<G>(best, 0, precision)?) as Box<dyn Agent<G>>);
        let subset = set.subset(net_n);
        Some(grade::<G>(&alone, &subset, threads, seed, progress)?)
    } else {
        None
    };
    let search = if search_n > 0 {
        let best_net = stage_net::<G>(cfg, best)?;
        let searching = || best_net.player::<G>(cfg.eval.sims, 0);
        let subset = set.subset(search_n);
        Some(grade::<G>(&searching, &subset, threads, seed, progress)?)
    } else {
        None
    };
    Ok(Grades {
        net,
        search,
        seconds: Some(started.elapsed().as_secs_f64()),
    })
}
