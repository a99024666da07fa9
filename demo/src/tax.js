/**
 * VAT. Prices in the catalogue include it; an invoice shows how much of each total is VAT, rate by
 * rate. Rates are in percent.
 */
import { sum } from './money.js';

export const VAT_RATES = {
  standard: 20,
  food: 5.5,
  books: 5.5,
  exempt: 0,
};

/** The VAT rate of a tax category; an unknown category is an error, never a silent 0. */
export function vatRate(category) {
  const rate = VAT_RATES[category];
  if (rate === undefined) throw new Error(`unknown tax category: ${category}`);
  return rate;
}

/** The VAT inside a price that includes it: 1200 at 20% holds 200. */
export function vatIncluded(cents, rate) {
  return cents - Math.round((cents * 100) / (100 + rate));
}

/**
 * The VAT of some lines, one entry per rate, highest rate first:
 * [{ rate: 20, totalCents: 2400, vatCents: 400 }, { rate: 5.5, … }]
 */
export function vatSummary(lines) {
  const byRate = new Map();
  for (const line of lines) {
    const rate = vatRate(line.category);
    byRate.set(rate, [...(byRate.get(rate) ?? []), line.totalCents]);
  }
  return [...byRate.entries()]
    .sort(([a], [b]) => b - a)
    .map(([rate, totals]) => {
      const totalCents = sum(totals);
      return { rate, totalCents, vatCents: vatIncluded(totalCents, rate) };
    });
}
