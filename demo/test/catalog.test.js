import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PRODUCTS, findProduct, searchProducts } from '../src/catalog.js';

test('finds a product by its SKU', () => {
  assert.equal(findProduct('MUG-BLUE').priceCents, 1200);
  assert.throws(() => findProduct('MUG-RED'), /unknown product: MUG-RED/);
});

test('every product has a whole price and a tax category', () => {
  for (const product of PRODUCTS) {
    assert.ok(Number.isInteger(product.priceCents), product.sku);
    assert.ok(['standard', 'food', 'books', 'exempt'].includes(product.category), product.sku);
  }
});

test('searches names by every word, in any case', () => {
  const found = searchProducts('TEA 100').map((p) => p.sku);
  assert.deepEqual(found, ['TEA-EARL', 'TEA-MINT']);
  assert.deepEqual(searchProducts('kettle'), []);
});

test('gives every product its own SKU', () => {
  const skus = PRODUCTS.map((p) => p.sku);
  assert.equal(new Set(skus).size, skus.length);
});

test('ignores extra spaces in a search', () => {
  assert.deepEqual(searchProducts('  blue   mug ').map((p) => p.sku), ['MUG-BLUE']);
});

test('lists every product for an empty search', () => {
  assert.equal(searchProducts('').length, PRODUCTS.length);
});
