import { createPageType } from '../../common/pagination.js';
import { CarrierConnection } from './carrier-connection.entity.js';
import { PhoneNumber } from './phone-number.entity.js';

export const CarrierConnectionPage = createPageType(CarrierConnection, 'CarrierConnectionPage');
export const PhoneNumberPage = createPageType(PhoneNumber, 'PhoneNumberPage');
