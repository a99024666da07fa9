import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addItem, cartLines, cartTotals, createCart, removeItem, useCoupon } from '../src/cart.js';
import { PRODUCTS, findProduct, searchProducts } from '../src/catalog.js';
import { renderInvoice } from '../src/invoice.js';
import { formatMoney, percentOf, sum, toCents } from '../src/money.js';
import { createStock, inStock, reserve, restock, toReorder } from '../src/stock.js';
import { vatIncluded, vatRate, vatSummary } from '../src/tax.js';

describe('cart.js', () => {
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
});

describe('catalog.js', () => {
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
});

describe('invoice.js', () => {
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
});

describe('money.js', () => {
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
});

describe('stock.js', () => {
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
});

describe('tax.js', () => {
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
});
