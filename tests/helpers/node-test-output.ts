/**
 * What `node --test --test-reporter=tap` prints for the sample project's bug, as the offline
 * model's tests feed it back to it: the failing test's block, without node's summary.
 */
export const TAP_FAILURE = `# Subtest: gives the bulk discount from 10 items
not ok 20 - gives the bulk discount from 10 items
  ---
  duration_ms: 1.59
  type: 'test'
  location: '/work/shop/test/discounts.test.js:21:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    10000 !== 9000

  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  expected: 9000
  actual: 10000
  operator: 'strictEqual'
  ...`;
