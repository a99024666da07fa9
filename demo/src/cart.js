/**
 * The cart: which products, how many of each, and an optional coupon. The totals are worked out
 * from the catalogue every time, so a price change shows at once.
 */
import { findProduct } from './catalog.js';
import { couponDiscount, lineTotal } from './discounts.js';
import { sum } from './money.js';
import { vatSummary } from './tax.js';

export function createCart() {
  return { quantities: new Map(), coupon: null };
}

/** Add `quantity` of a product (1 by default). An unknown SKU throws before the cart changes. */
export function addItem(cart, sku, quantity = 1) {
  findProduct(sku);
  if (!Number.isInteger(quantity) || quantity < 1) {
    throw new RangeError(`add a whole number of items, from 1: ${quantity}`);
  }
  cart.quantities.set(sku, (cart.quantities.get(sku) ?? 0) + quantity);
  return cart;
}

/** Take some of a product out, or all of it when no quantity is given. */
export function removeItem(cart, sku, quantity) {
  const had = cart.quantities.get(sku) ?? 0;
  const left = quantity === undefined ? 0 : had - quantity;
  if (left > 0) cart.quantities.set(sku, left);
  else cart.quantities.delete(sku);
  return cart;
}

export function useCoupon(cart, code) {
  cart.coupon = code;
  return cart;
}

/** One line per product, in the order they were first added. */
export function cartLines(cart) {
  return [...cart.quantities].map(([sku, quantity]) => {
    const { name, priceCents, category } = findProduct(sku);
    const totalCents = lineTotal(priceCents, quantity);
    return { sku, name, category, quantity, unitCents: priceCents, totalCents };
  });
}

/**
 * What the customer pays: the lines' totals, less the coupon. The coupon is taken off the lines in
 * proportion, so the VAT summary stays true.
 */
export function cartTotals(cart) {
  const lines = cartLines(cart);
  const subtotalCents = sum(lines.map((line) => line.totalCents));
  const discountCents = cart.coupon ? couponDiscount(cart.coupon, subtotalCents) : 0;
  const share = subtotalCents === 0 ? 0 : discountCents / subtotalCents;
  const paid = lines.map((line) => {
    return { ...line, totalCents: Math.round(line.totalCents * (1 - share)) };
  });
  const totalCents = subtotalCents - discountCents;
  return { lines, subtotalCents, discountCents, totalCents, vat: vatSummary(paid) };
}
