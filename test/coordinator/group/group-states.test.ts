/**
 * The classic group's legal moves (Kafka's ClassicGroupState.validPreviousStates): every move
 * of the table is accepted, every other one throws and leaves the group as it was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClassicGroup,
  IllegalGroupTransition,
  VALID_PREVIOUS_GROUP_STATES,
  canGroupTransition,
  type GroupState,
} from '../../../src/coordinator/group/classic-group.js';

const STATES: GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

/** Kafka 3.9's table, written out independently of the code's: target <- allowed previous states. */
const KAFKA: Record<GroupState, GroupState[]> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

function groupIn(state: GroupState): ClassicGroup {
  const g = new ClassicGroup('g', 1);
  g.state = state; // set directly, as loading does: the move under test is the next one
  return g;
}

test("the table is Kafka's", () => {
  assert.deepEqual(new Set(VALID_PREVIOUS_GROUP_STATES.keys()), new Set(STATES));
  for (const to of STATES) assert.deepEqual(new Set(VALID_PREVIOUS_GROUP_STATES.get(to)), new Set(KAFKA[to]), `into ${to}`);
});

test('every legal move is made, with its timestamp', () => {
  let moves = 0;
  for (const to of STATES) {
    for (const from of KAFKA[to]) {
      assert.equal(canGroupTransition(from, to), true, `${from} -> ${to}`);
      const g = groupIn(from);
      g.transitionTo(to, 500);
      assert.equal(g.state, to);
      assert.equal(g.stateTimestamp, 500);
      moves++;
    }
  }
  assert.equal(moves, 11);
});

test('every other move throws IllegalGroupTransition and changes nothing', () => {
  let refused = 0;
  for (const to of STATES) {
    for (const from of STATES.filter((s) => !KAFKA[to].includes(s))) {
      assert.equal(canGroupTransition(from, to), false, `${from} -> ${to}`);
      const g = groupIn(from);
      assert.throws(
        () => g.transitionTo(to, 500),
        (err: unknown) =>
          err instanceof IllegalGroupTransition && err.from === from && err.to === to && err.message === `group g: illegal transition ${from} -> ${to}`,
      );
      assert.equal(g.state, from);
      assert.equal(g.stateTimestamp, 1);
      refused++;
    }
  }
  assert.equal(refused, 14);
});

test('a new group starts Empty and cannot become Stable without a rebalance', () => {
  const g = new ClassicGroup('fresh', 7);
  assert.equal(g.state, 'Empty');
  assert.throws(() => g.transitionTo('Stable', 8), IllegalGroupTransition);
  g.transitionTo('PreparingRebalance', 8);
  g.transitionTo('CompletingRebalance', 9);
  g.transitionTo('Stable', 10);
  assert.equal(g.state, 'Stable');
});
