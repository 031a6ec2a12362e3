//! Exact grading by full game-tree search, for games small enough to search to the end
//! (tic-tac-toe: 5,478 positions; 4x4 Othello): the exact expected result of a policy against
//! a uniformly random opponent (expectimax), the best such result any policy can reach, and a
//! policy's worst result against any opponent. Exact game values and the perfect player are
//! the search module's solver ([`crate::solvers::exhaustive`]).

use std::collections::HashMap;

use serde::Serialize;

use crate::games::{Game, Outcome, Player};

use super::qtable::QTable;

/// The policy being graded.
#[derive(Clone, Copy)]
pub enum Policy<'a, G: Game> {
    /// The best possible play against the opponent model.
    Best,
    /// The `ql:` player: the table's greedy move, a uniformly random one where the table has
    /// no row.
    Greedy(&'a QTable<G>),
}

/// What a finished game is worth to the graded side.
pub type Scoring = fn(Outcome, Player) -> f64;

/// Win 1, draw 0, loss -1.
pub fn score(o: Outcome, p: Player) -> f64 {
    o.value_for(p) as f64
}

/// 1 for a win, else 0 (so the value is a probability of winning).
pub fn win(o: Outcome, p: Player) -> f64 {
    if o == Outcome::Win(p) {
        1.0
    } else {
        0.0
    }
}

fn children<G: Game>(pos: &G) -> impl Iterator<Item = G> + '_ {
    pos.legal_moves().into_iter().map(move |m| {
        let mut c = pos.clone();
        c.play(m);
        c
    })
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0);
    for v in values {
        sum += v;
        n += 1;
    }
    sum / n.max(1) as f64
}

struct Expectimax<'a, G: Game> {
    side: Player,
    policy: Policy<'a, G>,
    scoring: Scoring,
    memo: HashMap<G, f64>,
}

impl<G: Game> Expectimax<'_, G> {
    fn value(&mut self, pos: &G) -> f64 {
        if let Some(o) = pos.outcome() {
            return (self.scoring)(o, self.side);
        }
        if let Some(&v) = self.memo.get(pos) {
            return v;
        }
        let v = if pos.to_move() != self.side {
            mean(children(pos).map(|c| self.value(&c)))
        } else {
            match self.policy {
                Policy::Best => children(pos)
                    .map(|c| self.value(&c))
                    .fold(f64::NEG_INFINITY, f64::max),
                Policy::Greedy(table) => match table.greedy(pos) {
                    Some(m) => {
                        let mut c = pos.clone();
                        c.play(m);
                        self.value(&c)
                    }
                    None => mean(children(pos).map(|c| self.value(&c))),
                },
            }
        };
        self.memo.insert(pos.clone(), v);
        v
    }
}

/// The exact expected value, under `scoring`, of `policy` playing `side` from the start
/// against an opponent that plays uniformly at random.
pub fn vs_random<G: Game>(side: Player, policy: Policy<G>, scoring: Scoring) -> f64 {
    Expectimax {
        side,
        policy,
        scoring,
        memo: HashMap::new(),
    }
    .value(&G::new())
}

/// The worst result (win 1, draw 0, loss -1) of the `ql:` player with `table` as `side`
/// against every possible opponent; where the table has no row, every move the random
/// fallback could make is counted.
pub fn worst_case<G: Game>(side: Player, table: &QTable<G>) -> i8 {
    fn go<G: Game>(pos: &G, side: Player, t: &QTable<G>, memo: &mut HashMap<G, i8>) -> i8 {
        if let Some(o) = pos.outcome() {
            return o.value_for(side) as i8;
        }
        if let Some(&v) = memo.get(pos) {
            return v;
        }
        let v = match t.greedy(pos).filter(|_| pos.to_move() == side) {
            Some(m) => {
                let mut c = pos.clone();
                c.play(m);
                go(&c, side, t, memo)
            }
            None => children(pos)
                .map(|c| go(&c, side, t, memo))
                .min()
                .unwrap_or(1),
        };
        memo.insert(pos.clone(), v);
        v
    }
    go(&G::new(), side, table, &mut HashMap::new())
}

/// A figure for each side.
#[derive(Serialize, Clone, Copy)]
pub struct BySide<T> {
    pub first: T,
    pub second: T,
}

/// The exact grading of a greedy policy.
#[derive(Serialize)]
pub struct Grades {
    /// Expected score (win 1, draw 0, loss -1) against a uniformly random opponent.
    pub vs_random: BySide<f64>,
    /// The best expected score any policy reaches against it.
    pub ceiling: BySide<f64>,
    /// Probability of winning against it.
    pub win_rate_vs_random: BySide<f64>,
    /// Worst result against any opponent at all (1 win, 0 draw, -1 loss).
    pub worst_case: BySide<i8>,
}

/// Grades the greedy policy of `table` exactly, by full game-tree search.
pub fn grade<G: Game>(table: &QTable<G>) -> Grades {
    let both = |f: &dyn Fn(Player) -> f64| BySide {
        first: f(Player::First),
        second: f(Player::Second),
    };
    Grades {
        vs_random: both(&|p| vs_random(p, Policy::Greedy(table), score)),
        ceiling: both(&|p| vs_random::<G>(p, Policy::Best, score)),
        win_rate_vs_random: both(&|p| vs_random(p, Policy::Greedy(table), win)),
        worst_case: BySide {
            first: worst_case(Player::First, table),
            second: worst_case(Player::Second, table),
        },
    }
}

impl Grades {
    /// The grading as a table for people.
    pub fn table(&self) -> String {
        use super::show_exact;
        let verdict = |v: i8| match v {
            1 => "always wins",
            0 => "never loses",
            _ => "can lose",
        };
        let mut s = String::from(
            "exact expected score against a uniformly random opponent (win 1, draw 0, loss -1):\n",
        );
        s.push_str(&format!(
            "{:<8} {:>24} {:>24} {:>8} {:>10}   against any opponent\n",
            "side", "greedy policy", "best possible", "ratio", "win rate"
        ));
        for (name, v, c, w, worst) in [
            (
                "first",
                self.vs_random.first,
                self.ceiling.first,
                self.win_rate_vs_random.first,
                self.worst_case.first,
            ),
            (
                "second",
                self.vs_random.second,
                self.ceiling.second,
                self.win_rate_vs_random.second,
                self.worst_case.second,
            ),
        ] {
            s.push_str(&format!(
                "{name:<8} {:>24} {:>24} {:>7.2}% {:>9.2}%   {}\n",
                show_exact(v),
                show_exact(c),
                100.0 * v / c,
                100.0 * w,
                verdict(worst)
            ));
        }
        s
    }
}
