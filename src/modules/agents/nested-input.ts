import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';
import { Rules } from '../../common/validation.js';

/** A nested object: @IsObject runs first, then the inner class is validated. */
export const nestedInput = (type: new () => object) =>
  Rules(
    ValidateNested(),
    Type(() => type),
    IsObject(),
  );
