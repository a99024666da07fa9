/**
 * Stock: how many of each product are on the shelf, reserving them for an order, and which ones
 * to reorder. A reservation is all or nothing: an order is never half reserved.
 */
import { findProduct } from './catalog.js';

// Reorder a product once its stock is down to this many.
export const REORDER_LEVEL = 5;

export function createStock(levels = {}) {
  const stock = new Map();
  for (const [sku, count] of Object.entries(levels)) {
    findProduct(sku);
    stock.set(sku, count);
  }
  return stock;
}

export const inStock = (stock, sku) => stock.get(sku) ?? 0;

/**
 * Take the items of an order off the shelf: { 'TEA-EARL': 2, 'MUG-BLUE': 1 }. If any is short,
 * nothing is taken, and the error names every product that is short.
 */
export function reserve(stock, items) {
  const short = Object.entries(items).filter(([sku, count]) => inStock(stock, sku) < count);
  if (short.length > 0) {
    const names = short.map(([sku, count]) => `${sku} (${inStock(stock, sku)} of ${count})`);
    throw new Error(`not enough in stock: ${names.join(', ')}`);
  }
  for (const [sku, count] of Object.entries(items)) {
    stock.set(sku, inStock(stock, sku) - count);
  }
  return stock;
}

/** Put items back on the shelf (a cancelled order, a delivery). */
export function restock(stock, items) {
  for (const [sku, count] of Object.entries(items)) stock.set(sku, inStock(stock, sku) + count);
  return stock;
}

/** The products to reorder: those down to REORDER_LEVEL or fewer, fewest first. */
export function toReorder(stock) {
  return [...stock]
    .filter(([, count]) => count <= REORDER_LEVEL)
    .sort(([, a], [, b]) => a - b)
    .map(([sku]) => sku);
}
