import { fuzzRoutes } from './rest-fuzz.js';

// The first half of REST_ROUTES; rest-routes-2 takes the rest, so the two files run in parallel.
fuzzRoutes((routes) => routes.slice(0, Math.ceil(routes.length / 2)));
