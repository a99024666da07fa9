import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addItem, createCart, useCoupon } from '../src/cart.js';
import { renderInvoice } from '../src/invoice.js';

const header = { number: 'F-0042', date: '2025-11-20', customer: 'Ada Lovelace' };

test('prints one line per product, then the totals', () => {
  const cart = addItem(addItem(createCart(), 'BOOK-TEA'), 'TEA-SENCHA', 2);
  const lines = renderInvoice(cart, header).split('\n');
  assert.equal(lines[0], 'Corner Shop · invoice F-0042');
  assert.match(lines[3], /^The Book of Tea \(1 × €14\.95\) +€14\.95$/);
  assert.match(lines[4], /^Sencha, 100 g \(2 × €7\.20\) +€14\.40$/);
  assert.match(lines.at(-2), /^Total +€29\.35$/);
  assert.match(lines.at(-1), /^ {2}of which VAT 5\.5% on €29\.35 +€1\.53$/);
});

test('shows a coupon as a line of its own', () => {
  const cart = useCoupon(addItem(createCart(), 'POT-IRON'), 'welcome5');
  const invoice = renderInvoice(cart, header);
  assert.match(invoice, /\nCoupon WELCOME5 +-€5\.00\n/);
  assert.match(invoice, /\nTotal +€43\.00\n/);
});

test('prints no coupon line without a coupon', () => {
  const invoice = renderInvoice(addItem(createCart(), 'MUG-BLUE'), header);
  assert.doesNotMatch(invoice, /Coupon/);
});

test('prints one VAT line per rate, highest first', () => {
  const cart = addItem(addItem(createCart(), 'TEA-EARL'), 'MUG-BLUE');
  const vat = renderInvoice(cart, header).split('\n').filter((l) => l.includes('of which VAT'));
  assert.deepEqual(vat.map((l) => l.match(/VAT ([\d.]+)%/)[1]), ['20', '5.5']);
});

test('keeps every line of the invoice the same width or narrower', () => {
  const cart = addItem(addItem(createCart(), 'POT-IRON', 3), 'BOOK-TEA', 2);
  for (const line of renderInvoice(cart, header).split('\n')) assert.ok(line.length <= 56, line);
});
