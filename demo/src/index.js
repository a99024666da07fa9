// corner-shop: everything a caller needs, from one place.
export { PRODUCTS, findProduct, searchProducts } from './catalog.js';
export { BULK_MIN_QUANTITY, BULK_PERCENT, COUPONS } from './discounts.js';
export { couponDiscount, lineTotal } from './discounts.js';
export { addItem, cartLines, cartTotals, createCart, removeItem, useCoupon } from './cart.js';
export { renderInvoice } from './invoice.js';
export { REORDER_LEVEL, createStock, inStock, reserve, restock, toReorder } from './stock.js';
export { formatMoney, percentOf, sum, toCents } from './money.js';
export { VAT_RATES, vatIncluded, vatRate, vatSummary } from './tax.js';
