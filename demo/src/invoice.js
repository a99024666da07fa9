/**
 * The invoice, as plain text: one line per product, the totals, and the VAT of each rate.
 */
import { cartTotals } from './cart.js';
import { formatMoney } from './money.js';

const WIDTH = 56;

const row = (left, right) => `${left.padEnd(WIDTH - right.length)}${right}`;

/** The invoice: renderInvoice(cart, { number: 'F-0042', date: '2025-11-20', customer: 'Ada' }) */
export function renderInvoice(cart, { number, date, customer }) {
  const totals = cartTotals(cart);
  const out = [`Corner Shop · invoice ${number}`, `${date} · ${customer}`, '-'.repeat(WIDTH)];
  for (const line of totals.lines) {
    const unit = `${line.quantity} × ${formatMoney(line.unitCents)}`;
    out.push(row(`${line.name} (${unit})`, formatMoney(line.totalCents)));
  }
  out.push('-'.repeat(WIDTH), row('Subtotal', formatMoney(totals.subtotalCents)));
  if (totals.discountCents > 0) {
    out.push(row(`Coupon ${cart.coupon.toUpperCase()}`, formatMoney(-totals.discountCents)));
  }
  out.push(row('Total', formatMoney(totals.totalCents)));
  for (const { rate, totalCents, vatCents } of totals.vat) {
    out.push(row(`  of which VAT ${rate}% on ${formatMoney(totalCents)}`, formatMoney(vatCents)));
  }
  return out.join('\n');
}
