import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStock, inStock, reserve, restock, toReorder } from '../src/stock.js';

test('starts from the levels it is given, and 0 for anything else', () => {
  const stock = createStock({ 'TEA-EARL': 20 });
  assert.equal(inStock(stock, 'TEA-EARL'), 20);
  assert.equal(inStock(stock, 'MUG-BLUE'), 0);
});

test('refuses a level for a product the shop does not sell', () => {
  assert.throws(() => createStock({ 'TEA-GREEN': 3 }), /unknown product/);
});

test('reserves the items of an order', () => {
  const stock = createStock({ 'TEA-EARL': 20, 'MUG-BLUE': 4 });
  reserve(stock, { 'TEA-EARL': 12, 'MUG-BLUE': 1 });
  assert.equal(inStock(stock, 'TEA-EARL'), 8);
  assert.equal(inStock(stock, 'MUG-BLUE'), 3);
});

test('reserves all or nothing, and names what is short', () => {
  const stock = createStock({ 'TEA-EARL': 20, 'MUG-BLUE': 1 });
  assert.throws(() => reserve(stock, { 'TEA-EARL': 2, 'MUG-BLUE': 2 }), /MUG-BLUE \(1 of 2\)/);
  assert.equal(inStock(stock, 'TEA-EARL'), 20);
});

test('puts items back', () => {
  const stock = restock(createStock({ 'POT-IRON': 1 }), { 'POT-IRON': 2, 'BOOK-TEA': 5 });
  assert.equal(inStock(stock, 'POT-IRON'), 3);
  assert.equal(inStock(stock, 'BOOK-TEA'), 5);
});

test('lists what to reorder, fewest first', () => {
  const stock = createStock({ 'TEA-EARL': 4, 'TEA-MINT': 30, 'MUG-BLUE': 0, 'POT-IRON': 5 });
  assert.deepEqual(toReorder(stock), ['MUG-BLUE', 'TEA-EARL', 'POT-IRON']);
});
