import { fuzzRoutes } from './rest-fuzz.js';

// The second half of REST_ROUTES; rest-routes-1 takes the first.
fuzzRoutes((routes) => routes.slice(Math.ceil(routes.length / 2)));
