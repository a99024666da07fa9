/**
 * Discounts, as the pricing sheet in README.md sets them:
 *   - bulk: from BULK_MIN_QUANTITY items of one product, that line costs BULK_PERCENT less;
 *   - coupons: a code the customer types, worth a percentage or a fixed amount off the order.
 */
import { percentOf } from './money.js';

export const BULK_MIN_QUANTITY = 10;
export const BULK_PERCENT = 10;

// Code → what it is worth. minOrderCents: the order must come to at least this before the coupon.
export const COUPONS = {
  WELCOME5: { kind: 'fixed', cents: 500, minOrderCents: 2000 },
  TEATIME: { kind: 'percent', percent: 15, minOrderCents: 0 },
};

/** Whether a line of `quantity` items of one product gets the bulk discount. */
function qualifiesForBulk(quantity) {
  return quantity > BULK_MIN_QUANTITY;
}

/** A line's total in cents: unit price × quantity, less the bulk discount where it applies. */
export function lineTotal(unitCents, quantity) {
  if (!Number.isInteger(quantity) || quantity < 1) {
    throw new RangeError(`a quantity is a whole number from 1, not ${quantity}`);
  }
  const gross = unitCents * quantity;
  if (!qualifiesForBulk(quantity)) return gross;
  return gross - percentOf(gross, BULK_PERCENT);
}

/** What a coupon takes off an order: 0 for an unknown code, or an order below its minimum. */
export function couponDiscount(code, orderCents) {
  const coupon = COUPONS[String(code).trim().toUpperCase()];
  if (!coupon || orderCents < coupon.minOrderCents) return 0;
  if (coupon.kind === 'percent') return percentOf(orderCents, coupon.percent);
  // A fixed coupon never takes the order below zero.
  return Math.min(coupon.cents, orderCents);
}
