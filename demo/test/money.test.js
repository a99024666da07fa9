import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMoney, percentOf, sum, toCents } from '../src/money.js';

test('turns euros into whole cents', () => {
  assert.equal(toCents(12.5), 1250);
  assert.equal(toCents(0.1 + 0.2), 30);
  assert.throws(() => toCents('12'), TypeError);
});

test('rounds a percentage to the cent, halves away from zero', () => {
  assert.equal(percentOf(995, 10), 100);
  assert.equal(percentOf(-995, 10), -100);
  assert.equal(percentOf(1000, 5.5), 55);
});

test('adds amounts', () => {
  assert.equal(sum([]), 0);
  assert.equal(sum([450, 390, 1200]), 2040);
});

test('prints amounts the way the shop does', () => {
  assert.equal(formatMoney(1250), '€12.50');
  assert.equal(formatMoney(5), '€0.05');
  assert.equal(formatMoney(-305), '-€3.05');
  assert.equal(formatMoney(123456789), '€1,234,567.89');
});

test('refuses what is not a finite amount', () => {
  assert.throws(() => toCents(Number.NaN), TypeError);
  assert.throws(() => toCents(Infinity), TypeError);
});

test('takes a percentage of nothing as nothing', () => {
  assert.equal(percentOf(0, 20), 0);
});

test('prints with another currency symbol when asked', () => {
  assert.equal(formatMoney(999, '£'), '£9.99');
});

test('adds refunds as negative amounts', () => {
  assert.equal(sum([1200, -450]), 750);
});
