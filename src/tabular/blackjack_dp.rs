//! Exact Blackjack values by dynamic programming over the infinite deck: the dealer's final
//! sum distribution by recursion, the optimal action values (Bellman optimality, solved
//! backwards since every hit either raises the sum or uses up the usable ace), the exact value
//! of any fixed policy, and the exact expected return of a hand dealt from scratch.

use crate::games::blackjack::{Action, Hand, State, CARD_PROBS, STATES};

/// Distribution of the dealer's final sum: indices 0..5 for 17..=21, 5 for a bust.
pub type DealerDist = [f64; 6];

fn dealer_dist_of(hand: Hand, memo: &mut [[Option<DealerDist>; 2]; 32]) -> DealerDist {
    let mut out = [0.0; 6];
    if hand.sum > 21 {
        out[5] = 1.0;
        return out;
    }
    if hand.sum >= 17 {
        out[hand.sum as usize - 17] = 1.0;
        return out;
    }
    if let Some(d) = memo[hand.sum as usize][hand.usable_ace as usize] {
        return d;
    }
    for (i, &p) in CARD_PROBS.iter().enumerate() {
        let next = dealer_dist_of(hand.with(i as u8 + 1), memo);
        for k in 0..6 {
            out[k] += p * next[k];
        }
    }
    memo[hand.sum as usize][hand.usable_ace as usize] = Some(out);
    out
}

/// The dealer's final sum distribution for each showing card 1 (ace) ..= 10 (index card - 1).
pub fn dealer_distributions() -> [DealerDist; 10] {
    let mut memo = [[None; 2]; 32];
    std::array::from_fn(|i| dealer_dist_of(Hand::of(i as u8 + 1), &mut memo))
}

/// Action values `q[state][action]` (action 0 stick, 1 hit) and the expected return of a deal.
#[derive(Clone, Debug)]
pub struct Values {
    pub q: [[f64; 2]; STATES],
    pub policy: [Action; STATES],
    /// Expected return of a hand dealt from scratch under `policy` (hitting below 12), with
    /// the book's naturals.
    pub deal_return: f64,
    /// The same if a natural were an ordinary 21 that the player sticks on (no special payout;
    /// the dealer may still draw to 21 and draw the hand).
    pub deal_return_without_naturals: f64,
}

/// What fixes the action in each state: the best one, or a given policy.
enum Rule<'a> {
    Optimal,
    Fixed(&'a [Action; STATES]),
}

fn solve(rule: Rule) -> Values {
    let dealer = dealer_distributions();
    let mut q = [[0.0; 2]; STATES];
    let mut policy = [Action::Stick; STATES];
    let mut value = [0.0; STATES];
    // A hit from a hand without a usable ace raises its sum; from one with a usable ace it
    // raises the sum or leaves a hand without one. So: no usable ace from 21 down, then the rest.
    for usable in [false, true] {
        for sum in (12..=21u8).rev() {
            for card in 1..=10u8 {
                let s = State {
                    player_sum: sum,
                    usable_ace: usable,
                    dealer_card: card,
                };
                let d = &dealer[card as usize - 1];
                let stick: f64 = d[5]
                    + (17..=21u8)
                        .map(|ds| d[ds as usize - 17] * compare_sums(sum, ds))
                        .sum::<f64>();
                let mut hit = 0.0;
                for (i, &p) in CARD_PROBS.iter().enumerate() {
                    let next = Hand {
                        sum,
                        usable_ace: usable,
                    }
                    .with(i as u8 + 1);
                    hit += p * if next.is_bust() {
                        -1.0
                    } else {
                        value[State {
                            player_sum: next.sum,
                            usable_ace: next.usable_ace,
                            dealer_card: card,
                        }
                        .index()]
                    };
                }
                let idx = s.index();
                q[idx] = [stick, hit];
                policy[idx] = match rule {
                    Rule::Optimal if hit > stick => Action::Hit,
                    Rule::Optimal => Action::Stick,
                    Rule::Fixed(p) => p[idx],
                };
                value[idx] = q[idx][policy[idx] as usize];
            }
        }
    }
    Values {
        q,
        policy,
        deal_return: deal_return(&value, true),
        deal_return_without_naturals: deal_return(&value, false),
    }
}

fn compare_sums(player: u8, dealer: u8) -> f64 {
    crate::games::blackjack::compare(player, dealer)
}

/// Expected return of a fresh deal given the value of every decision state.
fn deal_return(value: &[f64; STATES], naturals: bool) -> f64 {
    // Value of a hand below 12 (which always hits) against a showing card.
    fn low(hand: Hand, card: u8, value: &[f64; STATES]) -> f64 {
        if hand.sum >= 12 {
            return value[State {
                player_sum: hand.sum,
                usable_ace: hand.usable_ace,
                dealer_card: card,
            }
            .index()];
        }
        CARD_PROBS
            .iter()
            .enumerate()
            .map(|(i, &p)| p * low(hand.with(i as u8 + 1), card, value))
            .sum()
    }
    let mut total = 0.0;
    for (i1, &p1) in CARD_PROBS.iter().enumerate() {
        for (i2, &p2) in CARD_PROBS.iter().enumerate() {
            let hand = Hand::of(i1 as u8 + 1).with(i2 as u8 + 1);
            for (ic, &pc) in CARD_PROBS.iter().enumerate() {
                let card = ic as u8 + 1;
                let v = if naturals && hand.sum == 21 {
                    // a natural: +1 unless the hidden card gives the dealer one too
                    let dealer_natural = match card {
                        1 => CARD_PROBS[9],
                        10 => CARD_PROBS[0],
                        _ => 0.0,
                    };
                    1.0 - dealer_natural
                } else {
                    low(hand, card, value)
                };
                total += p1 * p2 * pc * v;
            }
        }
    }
    total
}

/// The optimal action values and policy (ties go to sticking).
pub fn optimal() -> Values {
    solve(Rule::Optimal)
}

/// The exact values of a fixed policy.
pub fn evaluate(policy: &[Action; STATES]) -> Values {
    solve(Rule::Fixed(policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dealer_distributions_sum_to_one() {
        for d in dealer_distributions() {
            assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn optimal_is_a_fixed_point() {
        let v = optimal();
        let again = evaluate(&v.policy);
        assert!((v.deal_return - again.deal_return).abs() < 1e-15);
        // hitting 21 can only hurt; sticking on 12 against a 7 loses to hitting
        let s21 = State {
            player_sum: 21,
            usable_ace: false,
            dealer_card: 7,
        };
        assert_eq!(v.policy[s21.index()], Action::Stick);
        let s12 = State {
            player_sum: 12,
            usable_ace: false,
            dealer_card: 7,
        };
        assert_eq!(v.policy[s12.index()], Action::Hit);
    }
}
