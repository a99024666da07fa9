/**
 * Money. Every amount in corner-shop is a whole number of cents: sums of cents stay exact, where
 * sums of euros pick up floating-point dust (0.1 + 0.2 is 0.30000000000000004).
 */

/** Cents from an amount in euros: toCents(12.5) is 1250. */
export function toCents(euros) {
  if (typeof euros !== 'number' || !Number.isFinite(euros)) {
    throw new TypeError(`not an amount: ${euros}`);
  }
  return Math.round(euros * 100);
}

/** A percentage of an amount, to the cent, halves away from zero: percentOf(995, 10) is 100. */
export function percentOf(cents, percent) {
  const exact = (cents * percent) / 100;
  return Math.sign(exact) * Math.round(Math.abs(exact));
}

/** The sum of some amounts. */
export function sum(amounts) {
  return amounts.reduce((total, cents) => total + cents, 0);
}

/** An amount as the shop prints it: 123456 is "€1,234.56", -305 is "-€3.05". */
export function formatMoney(cents, symbol = '€') {
  const sign = cents < 0 ? '-' : '';
  const whole = Math.floor(Math.abs(cents) / 100);
  const rest = String(Math.abs(cents) % 100).padStart(2, '0');
  const grouped = String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${symbol}${grouped}.${rest}`;
}
