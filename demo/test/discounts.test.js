import assert from 'node:assert/strict';
import { test } from 'node:test';
import { couponDiscount, lineTotal } from '../src/discounts.js';

// The pricing sheet (README.md): from 10 items of one product, that line costs 10% less.

test('charges unit price × quantity for a few items', () => {
  assert.equal(lineTotal(450, 1), 450);
  assert.equal(lineTotal(450, 3), 1350);
});

test('refuses a quantity that is not a whole number from 1', () => {
  assert.throws(() => lineTotal(450, 0), RangeError);
  assert.throws(() => lineTotal(450, 2.5), RangeError);
});

test('gives no bulk discount below 10 items', () => {
  assert.equal(lineTotal(1000, 9), 9000);
});

test('gives the bulk discount from 10 items', () => {
  // 10 items at €10.00: €100.00 less 10%.
  assert.equal(lineTotal(1000, 10), 9000);
});

test('gives the bulk discount above 10 items too', () => {
  assert.equal(lineTotal(1000, 12), 10800);
});

test('takes a fixed coupon off an order that is big enough', () => {
  assert.equal(couponDiscount('WELCOME5', 2500), 500);
  assert.equal(couponDiscount('welcome5 ', 2500), 500);
  assert.equal(couponDiscount('WELCOME5', 1999), 0);
});

test('takes a percentage coupon off any order', () => {
  assert.equal(couponDiscount('TEATIME', 2000), 300);
});

test('ignores a code it does not know', () => {
  assert.equal(couponDiscount('FREE', 5000), 0);
});

test('rounds the bulk discount to the cent', () => {
  // 12 × €9.95 = €119.40, less 10% (€11.94).
  assert.equal(lineTotal(995, 12), 10746);
});

test('takes a fixed coupon off an order of exactly its minimum', () => {
  assert.equal(couponDiscount('WELCOME5', 2000), 500);
});

test('takes nothing off an empty order', () => {
  assert.equal(couponDiscount('TEATIME', 0), 0);
});
