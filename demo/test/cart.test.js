import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addItem, cartLines, cartTotals, createCart, removeItem, useCoupon } from '../src/cart.js';

test('adds up the same product added twice', () => {
  const cart = addItem(addItem(createCart(), 'TEA-EARL', 2), 'TEA-EARL');
  const lines = cartLines(cart).map((l) => [l.sku, l.quantity, l.totalCents]);
  assert.deepEqual(lines, [['TEA-EARL', 3, 1350]]);
});

test('refuses an unknown product or an odd quantity, and stays as it was', () => {
  const cart = createCart();
  assert.throws(() => addItem(cart, 'TEA-GREEN'), /unknown product/);
  assert.throws(() => addItem(cart, 'TEA-EARL', -1), RangeError);
  assert.equal(cart.quantities.size, 0);
});

test('removes some or all of a product', () => {
  const cart = addItem(createCart(), 'MUG-BLUE', 4);
  assert.equal(cartLines(removeItem(cart, 'MUG-BLUE', 1))[0].quantity, 3);
  assert.deepEqual(cartLines(removeItem(cart, 'MUG-BLUE')), []);
});

test('totals a cart with a bulk line', () => {
  const cart = addItem(addItem(createCart(), 'TEA-MINT', 12), 'POT-IRON');
  const totals = cartTotals(cart);
  assert.equal(totals.subtotalCents, 4212 + 4800);
  assert.equal(totals.totalCents, 9012);
});

test('takes a coupon off the total and keeps the VAT true', () => {
  const cart = useCoupon(addItem(addItem(createCart(), 'MUG-BLUE', 2), 'TEA-EARL', 2), 'TEATIME');
  const totals = cartTotals(cart);
  assert.equal(totals.subtotalCents, 3300);
  assert.equal(totals.discountCents, 495);
  assert.equal(totals.totalCents, 2805);
  assert.deepEqual(totals.vat.map((v) => v.rate), [20, 5.5]);
  assert.equal(totals.vat[0].totalCents + totals.vat[1].totalCents, 2805);
});

test('starts empty, with nothing to pay', () => {
  const totals = cartTotals(createCart());
  assert.deepEqual([totals.subtotalCents, totals.totalCents, totals.vat.length], [0, 0, 0]);
});

test('removes the whole line when more is taken out than there is', () => {
  const cart = addItem(createCart(), 'TEA-MINT', 2);
  assert.deepEqual(cartLines(removeItem(cart, 'TEA-MINT', 5)), []);
});

test('keeps the lines in the order they were first added', () => {
  const cart = addItem(addItem(addItem(createCart(), 'MUG-BLUE'), 'TEA-EARL'), 'MUG-BLUE');
  assert.deepEqual(cartLines(cart).map((l) => l.sku), ['MUG-BLUE', 'TEA-EARL']);
});

test('charges no VAT on a gift card', () => {
  const totals = cartTotals(addItem(createCart(), 'CARD-GIFT'));
  assert.deepEqual(totals.vat, [{ rate: 0, totalCents: 2500, vatCents: 0 }]);
});

test('ignores a coupon the order is too small for', () => {
  const totals = cartTotals(useCoupon(addItem(createCart(), 'TEA-MINT'), 'WELCOME5'));
  assert.equal(totals.discountCents, 0);
  assert.equal(totals.totalCents, 390);
});
