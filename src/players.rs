//! Players and the player spec strings every command uses (`random`, `human`, `rules`,
//! `minimax:4`, `solver`, `mcts:800`, `best`, `latest`, `pretrained`, `model:PATH`, `ql:PATH`).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{anyhow, bail, Context, Result};

use crate::agent::{Agent, RandomAgent};
use crate::alphazero::player::net_player::search_player;
use crate::alphazero::player::policy_player::PolicyAgent;
use crate::alphazero::player::trained_search::{run_settings_beside, trained_search};
use crate::catalog::Catalogued;
use crate::core::cache_dir::cache_root;
use crate::core::limits::{at_most, MAX_SIMS};
use crate::games::{Game, Move, Outcome, Player};
use crate::nn::{default_device, Evaluator, InferenceNet, Net, Shape};
use crate::search::agent::rollout_agent;
use crate::search::alphabeta::AlphaBetaAgent;
use crate::search::mcts::{PlaySearch, SearchKind};
use crate::tabular::qtable::{QAgent, QTable};

/// A parsed player spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    Random,
    Human,
    Rules,
    Minimax(u32),
    Solver,
    Mcts(u32),
    Best,
    Latest,
    /// The network shipped with the program ([`crate::catalog::Pretrained`]).
    Pretrained,
    Model(PathBuf),
    QTable(PathBuf),
}

pub const SPEC_HELP: &str =
    "random, human, rules, minimax:DEPTH, solver, mcts:SIMS, best, latest, pretrained, \
                             model:PATH, ql:PATH";

impl FromStr for PlayerSpec {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        let (head, arg) = match s.split_once(':') {
            Some((h, a)) => (h, Some(a)),
            None => (s, None),
        };
        let number = |what: &str| -> Result<u32> {
            let a = arg.ok_or_else(|| anyhow!("player '{s}' needs a {what}, e.g. '{head}:4'"))?;
            let n: u32 = a
                .parse()
                .map_err(|_| anyhow!("player '{s}': '{a}' is not a {what} (a whole number)"))?;
            if n == 0 {
                bail!("player '{s}': the {what} must be at least 1");
            }
            Ok(n)
        };
        let path = |what: &str| -> Result<PathBuf> {
            match arg {
                Some(a) if !a.is_empty() => Ok(PathBuf::from(a)),
                _ => bail!("player '{s}' needs a path, e.g. '{head}:{what}'"),
            }
        };
        let no_arg = |spec: PlayerSpec| -> Result<PlayerSpec> {
            match arg {
                None => Ok(spec),
                Some(_) => bail!("player '{head}' takes no ':' argument (got '{s}')"),
            }
        };
        match head {
            "random" => no_arg(PlayerSpec::Random),
            "human" => no_arg(PlayerSpec::Human),
            "rules" => no_arg(PlayerSpec::Rules),
            "solver" => no_arg(PlayerSpec::Solver),
            "best" => no_arg(PlayerSpec::Best),
            "latest" => no_arg(PlayerSpec::Latest),
            "pretrained" => no_arg(PlayerSpec::Pretrained),
            "minimax" => Ok(PlayerSpec::Minimax(number("depth")?)),
            "mcts" => {
                let n = number("number of simulations")?;
                at_most(&format!("player '{s}': simulations"), n as u64, MAX_SIMS)?;
                Ok(PlayerSpec::Mcts(n))
            }
            "model" => Ok(PlayerSpec::Model(path("models/connect4/best.safetensors")?)),
            "ql" => Ok(PlayerSpec::QTable(path("qtable.bin")?)),
            _ => bail!("unknown player '{s}'; players are: {SPEC_HELP}"),
        }
    }
}

impl std::fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlayerSpec::Random => write!(f, "random"),
            PlayerSpec::Human => write!(f, "human"),
            PlayerSpec::Rules => write!(f, "rules"),
            PlayerSpec::Minimax(d) => write!(f, "minimax:{d}"),
            PlayerSpec::Solver => write!(f, "solver"),
            PlayerSpec::Mcts(n) => write!(f, "mcts:{n}"),
            PlayerSpec::Best => write!(f, "best"),
            PlayerSpec::Latest => write!(f, "latest"),
            PlayerSpec::Pretrained => write!(f, "pretrained"),
            PlayerSpec::Model(p) => write!(f, "model:{}", p.display()),
            PlayerSpec::QTable(p) => write!(f, "ql:{}", p.display()),
        }
    }
}

/// What building a player may need beyond its spec.
#[derive(Clone, Debug)]
pub struct BuildContext {
    /// Where `best` and `latest` live (`models/<game>/`).
    pub models_dir: PathBuf,
    /// Simulations per move for network players (`best`, `latest`, `model:`).
    pub sims: Option<u32>,
    /// Opening plies network players choose by visit-proportional sampling, so games differ.
    pub random_plies: u32,
    /// Where the Connect Four solver keeps its opening book and cache.
    pub solver_dir: PathBuf,
    /// The tree search of network players; `None`: the one each network's run trained with
    /// ([`trained_search`]).
    pub search: Option<SearchKind>,
    /// Network players average the network over the game's symmetries.
    pub symmetries: bool,
    /// The file of the network shipped for the game, if it ships one
    /// ([`crate::catalog::pretrained_model`]).
    pub pretrained: Option<PathBuf>,
}

/// The Connect Four solver's folder in a clone: its book, and the cache the tests and scripts
/// share.
const CLONE_SOLVER_DIR: &str = "data/connect4";

/// Where the Connect Four solver's book and cache live unless the command line says otherwise:
/// the clone's `data/connect4` where it exists (run from a clone), else `connect4` in the
/// cache folder ([`cache_root`]), so that a command run anywhere else leaves no folder behind
/// in the working directory and its solved positions are kept for the next one.
pub fn default_solver_dir() -> PathBuf {
    let clone = Path::new(CLONE_SOLVER_DIR);
    if clone.is_dir() {
        clone.to_path_buf()
    } else {
        cache_root().join("connect4")
    }
}

/// Simulations per move of a network player when `--sims` is not given.
pub const DEFAULT_NET_SIMS: u32 = 200;

impl Default for BuildContext {
    fn default() -> Self {
        BuildContext {
            models_dir: PathBuf::from("models"),
            sims: None,
            random_plies: 0,
            solver_dir: default_solver_dir(),
            search: None,
            symmetries: false,
            pretrained: None,
        }
    }
}

impl PlayerSpec {
    /// Whether the player needs the terminal (so a match must run on one thread).
    pub fn is_interactive(&self) -> bool {
        matches!(self, PlayerSpec::Human)
    }

    /// The file of a network player's weights; `None` for players without a network.
    pub fn weights(&self, ctx: &BuildContext) -> Option<PathBuf> {
        match self {
            PlayerSpec::Best => Some(ctx.models_dir.join("best.safetensors")),
            PlayerSpec::Latest => Some(ctx.models_dir.join("latest.safetensors")),
            PlayerSpec::Pretrained => ctx.pretrained.clone(),
            PlayerSpec::Model(path) => Some(path.clone()),
            _ => None,
        }
    }

    /// The tree search a network player plays: the one `ctx` asks for, else the one its run
    /// trained with; `None` for players without a network.
    pub fn network_search(&self, ctx: &BuildContext) -> Result<Option<PlaySearch>> {
        self.weights(ctx)
            .map(|weights| search_for(&weights, ctx))
            .transpose()
    }

    /// How a network player plays, as a line for a command to show beside its figures (e.g.
    /// `best: gumbel search, 200 simulations a move, the search its run trained with (...)`);
    /// `None` for players without a network.
    pub fn describe_play(&self, ctx: &BuildContext) -> Result<Option<String>> {
        let Some(search) = self.network_search(ctx)? else {
            return Ok(None);
        };
        let trained_with = self
            .weights(ctx)
            .is_some_and(|w| run_settings_beside(&w).is_file());
        let origin = match (ctx.search, trained_with) {
            (Some(_), _) => "as asked",
            (None, true) => "the search its run trained with (--search chooses another)",
            (None, false) => {
                "no run.json beside the network says how it trained (--search chooses another)"
            }
        };
        Ok(Some(match ctx.sims.unwrap_or(DEFAULT_NET_SIMS) {
            0 => format!("{self}: the network alone, its policy's most likely move"),
            sims => format!("{self}: {search} search, {sims} simulations a move, {origin}"),
        }))
    }

    /// Builds a fresh player for game `G`.
    pub fn build<G: Catalogued>(&self, ctx: &BuildContext) -> Result<Box<dyn Agent<G>>> {
        let net = |path: PathBuf| -> Result<Box<dyn Agent<G>>> {
            let search = search_for(&path, ctx)?;
            let net = Net::load(&path, G::NAME, Shape::of::<G>(), default_device())?;
            Ok(network_player::<G, _>(
                InferenceNet::new(&net)?,
                search,
                ctx,
            ))
        };
        let agent: Result<Box<dyn Agent<G>>> = match (self, self.weights(ctx)) {
            (_, Some(weights)) => net(weights),
            (PlayerSpec::Random, _) => Ok(Box::new(RandomAgent::new())),
            (PlayerSpec::Human, _) => Ok(Box::new(HumanAgent::stdio())),
            (PlayerSpec::Rules, _) => G::rules_agent()
                .ok_or_else(|| anyhow!("there is no rule-based player for {}", G::NAME)),
            (PlayerSpec::Solver, _) => Ok(G::solver_agent(&ctx.solver_dir)),
            (PlayerSpec::Mcts(sims), _) => Ok(Box::new(rollout_agent::<G>(*sims))),
            (PlayerSpec::Minimax(depth), _) => Ok(Box::new(AlphaBetaAgent::<G>::new(*depth))),
            // Greedy in the table; a seeded random legal move where the table has no row.
            (PlayerSpec::QTable(path), _) => {
                QTable::<G>::load(path).map(|t| Box::new(QAgent::new(t)) as Box<dyn Agent<G>>)
            }
            (PlayerSpec::Pretrained, None) => {
                bail!(
                    "no network is shipped for {}: train one with `zero cycle`",
                    G::NAME
                )
            }
            (PlayerSpec::Best | PlayerSpec::Latest | PlayerSpec::Model(_), None) => {
                bail!("a network player without a network file")
            }
        };
        agent.with_context(|| format!("cannot build player '{self}' for {}", G::NAME))
    }
}

/// The tree search of the network at `weights`: the one `ctx` asks for (with its default
/// settings; its run's `run.json` is not read, so that `--search` plays even where that file is
/// broken), else the one its run trained with.
pub fn search_for(weights: &Path, ctx: &BuildContext) -> Result<PlaySearch> {
    match ctx.search {
        Some(asked) => Ok(PlaySearch::new(asked)),
        None => trained_search(weights),
    }
}

/// A network player on `net`, a network of its own or a client of an inference thread that
/// several players share (`zero serve`): `ctx.sims` simulations a move of `search`, or with 0
/// the network alone playing its policy's most likely move (so that it can be graded alone).
pub fn network_player<G: Game, E: Evaluator + Send + 'static>(
    net: E,
    search: PlaySearch,
    ctx: &BuildContext,
) -> Box<dyn Agent<G>> {
    match ctx.sims.unwrap_or(DEFAULT_NET_SIMS) {
        0 if ctx.symmetries => {
            Box::new(PolicyAgent::new(net, ctx.random_plies).averaging_symmetries::<G>())
        }
        0 => Box::new(PolicyAgent::new(net, ctx.random_plies)),
        sims => Box::new(search_player::<G, E>(
            net,
            sims,
            ctx.random_plies,
            search,
            ctx.symmetries,
        )),
    }
}

/// The user quit a game.
#[derive(Debug, thiserror::Error)]
#[error("the human player quit")]
pub struct Quit;

/// A person at the terminal: shows the board, asks for a move, asks again on garbled or illegal
/// input, and accepts `quit`.
pub struct HumanAgent {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

impl HumanAgent {
    pub fn stdio() -> Self {
        HumanAgent {
            input: Box::new(std::io::BufReader::new(std::io::stdin())),
            output: Box::new(std::io::stdout()),
        }
    }
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> Self {
        HumanAgent { input, output }
    }
}

/// A side as the terminal's board shows its stones.
fn side_mark<G: Catalogued>(p: Player) -> &'static str {
    G::SIDES[p.index()].mark
}

impl<G: Catalogued> Agent<G> for HumanAgent {
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let legal: Vec<String> = pos
            .legal_moves()
            .iter()
            .map(|&m| pos.format_move(m))
            .collect();
        writeln!(self.output, "\n{}", pos.display())?;
        loop {
            write!(
                self.output,
                "Your move as {} ({}; 'quit' to stop): ",
                side_mark::<G>(pos.to_move()),
                legal.join(" ")
            )?;
            self.output.flush()?;
            let mut line = String::new();
            if self.input.read_line(&mut line)? == 0 {
                return Err(Quit.into());
            }
            let line = line.trim();
            if line.eq_ignore_ascii_case("quit") || line.eq_ignore_ascii_case("q") {
                return Err(Quit.into());
            }
            match pos.parse_move(line) {
                Ok(m) if pos.is_legal(m) => return Ok(m),
                Ok(m) => writeln!(
                    self.output,
                    "{} is not legal here; legal moves: {}",
                    pos.format_move(m),
                    legal.join(" ")
                )?,
                Err(e) => writeln!(self.output, "{e}")?,
            }
        }
    }
    fn game_over(&mut self, pos: &G) {
        let verdict = match pos.outcome() {
            Some(Outcome::Draw) => "a draw".to_string(),
            Some(Outcome::Win(p)) => format!("{} wins", side_mark::<G>(p)),
            None => "unfinished".to_string(),
        };
        let _ = writeln!(self.output, "\n{}Game over: {verdict}.", pos.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Connect4;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_network_players_line_says_where_its_search_came_from() {
        let dir = tempfile::tempdir().unwrap();
        let spec = PlayerSpec::Model(dir.path().join("best.safetensors"));
        let mut ctx = BuildContext::default();
        let line = |ctx: &BuildContext| spec.describe_play(ctx).unwrap().unwrap();
        let copied = line(&ctx);
        assert!(copied.contains("puct search"), "{copied}");
        assert!(
            copied.contains("no run.json beside the network"),
            "{copied}"
        );
        std::fs::write(
            dir.path().join("run.json"),
            r#"{"mcts": {"search": "gumbel"}}"#,
        )
        .unwrap();
        let trained = line(&ctx);
        assert!(trained.contains("gumbel search"), "{trained}");
        assert!(
            trained.contains("the search its run trained with"),
            "{trained}"
        );
        ctx.search = Some(SearchKind::Puct);
        let asked = line(&ctx);
        assert!(
            asked.contains("puct search") && asked.ends_with("as asked"),
            "{asked}"
        );
    }

    #[test]
    fn specs_parse_and_errors_list_the_players() {
        assert_eq!(
            "minimax:4".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Minimax(4)
        );
        assert_eq!(
            "model:a/b.safetensors".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Model("a/b.safetensors".into())
        );
        let e = "minimax".parse::<PlayerSpec>().unwrap_err().to_string();
        assert!(e.contains("depth"), "{e}");
        let e = "minimax:x".parse::<PlayerSpec>().unwrap_err().to_string();
        assert!(e.contains("not a depth"), "{e}");
        let e = "alphago".parse::<PlayerSpec>().unwrap_err().to_string();
        assert!(
            e.contains("unknown player") && e.contains("minimax:DEPTH"),
            "{e}"
        );
        assert!("random:3".parse::<PlayerSpec>().is_err());
        assert!("mcts:0".parse::<PlayerSpec>().is_err());
        assert!("ql:".parse::<PlayerSpec>().is_err());
    }

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn human_reasks_on_bad_input_and_quits() {
        let sink = Sink::default();
        let input = "banana\n9\n4\n".as_bytes();
        let mut h = HumanAgent::new(Box::new(input), Box::new(sink.clone()));
        let pos = Connect4::new();
        let m = Agent::<Connect4>::choose(&mut h, &pos).unwrap();
        assert_eq!(m, 3);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("column number"), "{text}");
        assert!(text.contains("columns are numbered 1-7"), "{text}");

        let full = Connect4::parse_position("111111").unwrap();
        let sink = Sink::default();
        let mut h = HumanAgent::new(Box::new("1\nquit\n".as_bytes()), Box::new(sink.clone()));
        let e = Agent::<Connect4>::choose(&mut h, &full).unwrap_err();
        assert!(e.is::<Quit>());
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("1 is not legal"), "{text}");
    }
}
