import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vatIncluded, vatRate, vatSummary } from '../src/tax.js';

test('knows the rate of each category', () => {
  assert.equal(vatRate('standard'), 20);
  assert.equal(vatRate('books'), 5.5);
  assert.equal(vatRate('exempt'), 0);
  assert.throws(() => vatRate('luxury'), /unknown tax category/);
});

test('finds the VAT inside a price that includes it', () => {
  assert.equal(vatIncluded(1200, 20), 200);
  assert.equal(vatIncluded(1055, 5.5), 55);
  assert.equal(vatIncluded(2500, 0), 0);
});

test('sums VAT by rate, highest rate first', () => {
  const lines = [
    { category: 'food', totalCents: 450 },
    { category: 'standard', totalCents: 1200 },
    { category: 'books', totalCents: 605 },
  ];
  assert.deepEqual(vatSummary(lines), [
    { rate: 20, totalCents: 1200, vatCents: 200 },
    { rate: 5.5, totalCents: 1055, vatCents: 55 },
  ]);
});

test('finds the VAT inside a food price', () => {
  assert.equal(vatIncluded(450, 5.5), 23);
});

test('has no VAT lines for no lines', () => {
  assert.deepEqual(vatSummary([]), []);
});

test('refuses a line of an unknown category', () => {
  const lines = [{ category: 'luxury', totalCents: 100 }];
  assert.throws(() => vatSummary(lines), /unknown tax category/);
});
