//! Blackjack as in Sutton & Barto, Example 5.3: a single-agent environment with chance, not a
//! [`Game`](super::Game).
//!
//! - Infinite deck: every draw is A, 2..10, J, Q or K with probability 1/13 each; face cards
//!   count 10, so a 10-point card comes with probability 4/13.
//! - An ace counts 11 unless that busts the hand (a "usable ace"), then 1.
//! - The player hits or sticks; below 12 the player always hits (no card can bust such a hand,
//!   and the decision states are sums 12..21, as in the book).
//! - The dealer shows one card, draws the hidden one, hits below 17 and sticks on every 17,
//!   soft 17 included.
//! - Rewards +1 win, 0 draw, -1 loss. A natural (ace and a 10-point card as the two dealt
//!   cards) wins +1 (not 3:2) unless the dealer also has a natural, which is a draw (the book's
//!   treatment). A dealer natural against a player who is not dealt one is not special: the
//!   player still plays, and sums are compared (a player's drawn 21 against it is a draw).
//!   Exploring starts begin in a decision state, not a deal, so they never count a natural.

use rand::{Rng, RngCore};

use crate::core::rng::{rng_from_seed, Rng64};

/// Probability of each card value 1 (ace) ..= 10 drawn from the infinite deck.
pub const CARD_PROBS: [f64; 10] = [
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    1.0 / 13.0,
    4.0 / 13.0,
];

/// The player's two actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Action {
    Stick = 0,
    Hit = 1,
}

impl Action {
    pub fn from_index(i: usize) -> Action {
        if i == 0 {
            Action::Stick
        } else {
            Action::Hit
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Action::Stick => "stick",
            Action::Hit => "hit",
        }
    }
}

/// The infinite deck: draws card values from a seeded generator, sixteen random bits a card
/// (the 3 of 65,536 values above 13 x 5,041 are thrown away, so the 13 ranks stay exactly
/// equally likely) so that one 64-bit draw serves four cards.
#[derive(Clone, Debug)]
pub struct Deck {
    rng: Rng64,
    bits: u64,
    chunks: u32,
}

/// The largest multiple of 13 that fits in 16 bits.
const ACCEPT: u64 = 13 * 5_041;

impl Deck {
    pub fn new(seed: u64) -> Deck {
        Deck {
            rng: rng_from_seed(seed),
            bits: 0,
            chunks: 0,
        }
    }
    /// Draws one card value: 1 for an ace, 10 for 10, J, Q and K.
    #[inline]
    pub fn draw(&mut self) -> u8 {
        loop {
            if self.chunks == 0 {
                self.bits = self.rng.next_u64();
                self.chunks = 4;
            }
            let chunk = self.bits & 0xffff;
            self.bits >>= 16;
            self.chunks -= 1;
            if chunk < ACCEPT {
                // rank 0 is the ace, ranks 9.. are 10 and the faces
                return ((chunk % 13) as u8 + 1).min(10);
            }
        }
    }
    /// A uniform integer in `0..n`, from the same generator.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }
}

/// A hand as the rules see it: the best total and whether an ace counts 11 in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Hand {
    pub sum: u8,
    pub usable_ace: bool,
}

impl Hand {
    /// The hand of a single card.
    pub fn of(card: u8) -> Hand {
        Hand::default().with(card)
    }
    /// The hand after taking `card` (1 = ace); a sum over 21 means bust.
    #[inline]
    pub fn with(self, card: u8) -> Hand {
        let (mut sum, mut usable) = (self.sum + card, self.usable_ace);
        if card == 1 && sum + 10 <= 21 {
            sum += 10;
            usable = true;
        }
        if sum > 21 && usable {
            sum -= 10;
            usable = false;
        }
        Hand {
            sum,
            usable_ace: usable,
        }
    }
    pub fn is_bust(self) -> bool {
        self.sum > 21
    }
}

/// A decision state: player sum 12..=21, usable ace, dealer's showing card 1 (ace) ..= 10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub player_sum: u8,
    pub usable_ace: bool,
    pub dealer_card: u8,
}

/// Number of decision states.
pub const STATES: usize = 200;

impl State {
    /// A dense index in `0..STATES`: usable ace, then player sum, then dealer card.
    #[inline]
    pub fn index(self) -> usize {
        (self.usable_ace as usize) * 100
            + (self.player_sum as usize - 12) * 10
            + (self.dealer_card as usize - 1)
    }
    pub fn from_index(i: usize) -> State {
        State {
            usable_ace: i >= 100,
            player_sum: (i % 100 / 10) as u8 + 12,
            dealer_card: (i % 10) as u8 + 1,
        }
    }
    pub fn all() -> impl Iterator<Item = State> {
        (0..STATES).map(State::from_index)
    }
}

/// The dealer's final sum (over 21 for a bust) after showing `showing` and playing out.
#[inline]
pub fn dealer_final(showing: u8, deck: &mut Deck) -> u8 {
    let mut hand = Hand::of(showing);
    while hand.sum < 17 {
        hand = hand.with(deck.draw());
    }
    hand.sum
}

/// The reward of a player who stood on `player` (≤ 21) against the dealer's final sum.
#[inline]
pub fn compare(player: u8, dealer: u8) -> f64 {
    if dealer > 21 || player > dealer {
        1.0
    } else if player == dealer {
        0.0
    } else {
        -1.0
    }
}

/// Plays one hand from a fresh deal with `policy` (indexed by [`State::index`], hitting
/// below 12) and returns the reward.
pub fn play_hand(policy: &[Action; STATES], deck: &mut Deck) -> f64 {
    let (c1, c2) = (deck.draw(), deck.draw());
    let showing = deck.draw();
    let hidden = deck.draw();
    let mut player = Hand::of(c1).with(c2);
    let dealer = Hand::of(showing).with(hidden);
    if player.sum == 21 {
        return if dealer.sum == 21 { 0.0 } else { 1.0 };
    }
    while player.sum < 12 {
        player = player.with(deck.draw());
    }
    loop {
        let state = State {
            player_sum: player.sum,
            usable_ace: player.usable_ace,
            dealer_card: showing,
        };
        match policy[state.index()] {
            Action::Stick => break,
            Action::Hit => {
                player = player.with(deck.draw());
                if player.is_bust() {
                    return -1.0;
                }
            }
        }
    }
    let mut d = dealer;
    while d.sum < 17 {
        d = d.with(deck.draw());
    }
    compare(player.sum, d.sum)
}

/// Formats a dealer card the way the book's grids label it (A for the ace).
pub fn card_label(card: u8) -> String {
    if card == 1 {
        "A".into()
    } else {
        card.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aces_count_eleven_unless_that_busts() {
        let h = Hand::of(1).with(6);
        assert_eq!((h.sum, h.usable_ace), (17, true));
        let h = h.with(10);
        assert_eq!((h.sum, h.usable_ace), (17, false));
        let h = Hand::of(1).with(1);
        assert_eq!((h.sum, h.usable_ace), (12, true));
        let h = Hand::of(10).with(9).with(1);
        assert_eq!((h.sum, h.usable_ace), (20, false));
        assert!(Hand::of(10).with(9).with(5).is_bust());
    }

    #[test]
    fn state_index_roundtrips() {
        for i in 0..STATES {
            assert_eq!(State::from_index(i).index(), i);
        }
    }

    #[test]
    fn cards_follow_the_infinite_deck() {
        let mut deck = Deck::new(3);
        let mut counts = [0u32; 11];
        for _ in 0..130_000 {
            counts[deck.draw() as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        for (v, &c) in counts.iter().enumerate().skip(1) {
            let expected = 130_000.0 * CARD_PROBS[v - 1];
            assert!(
                (c as f64 - expected).abs() < 5.0 * expected.sqrt(),
                "{v}: {c}"
            );
        }
    }

    #[test]
    fn dealer_sticks_on_soft_seventeen() {
        // showing an ace, the dealer keeps drawing until 17 or more, soft totals included
        let mut deck = Deck::new(1);
        for _ in 0..1000 {
            let d = dealer_final(1, &mut deck);
            assert!(d >= 17);
        }
    }
}
